package catrun

import (
	"fmt"

	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/catbank"
	"github.com/jeirt/jeirt/train/estimate"
)

// StopTargetScoreWidth is the stop reason of a test ended by
// CAT.TargetScoreWidth.
const StopTargetScoreWidth = "target_score_width"

// scorer is the fit's score estimator (estimate.IRT: the answers of an
// adaptive test are not a sample of the bank, so the estimators that lean
// on the observed mean do not apply).
func scorer(f *catbank.Fit) (*estimate.Scorer, error) {
	s := &estimate.Scorer{Fit: f.Folder.IRT(), Prior: f.Prior}
	return s, s.Prepare()
}

// scoreNow is the running estimate of the session's score on the whole
// bank, and its line.
func scoreNow(sc *estimate.Scorer, s *cat.Session) (estimate.Score, string, error) {
	a := estimate.Answers{Items: s.Asked()}
	for _, y := range s.Answers() {
		a.Y = append(a.Y, float64(y))
	}
	est, err := sc.Estimate(estimate.IRT, a, nil)
	if err != nil {
		return estimate.Score{}, "", err
	}
	x := est[0]
	return x, fmt.Sprintf("score on all %d items %.4f [%.4f, %.4f]", x.N, x.Score, x.Lo, x.Hi), nil
}
