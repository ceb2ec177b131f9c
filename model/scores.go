package model

import (
	"fmt"
	"math"
)

// NoScores are Scores where none are known: NaN, and N −1.
func NoScores() Scores {
	nan := Float(math.NaN())
	return Scores{Accuracy: nan, AUC: nan, Brier: nan, ECE: nan, LogLoss: nan, N: -1}
}

// Scores are the scores of probabilistic predictions of binary labels as
// jeirt's JSON files carry them (metrics.json, onboard.json, jeirt eval
// --json); an undefined score (the AUC of one class) is NaN, null in JSON.
type Scores struct {
	Accuracy Float `json:"accuracy"` // fraction with (p ≥ 0.5) == label
	AUC      Float `json:"auc"`      // area under the ROC curve, ties counted half
	Brier    Float `json:"brier"`    // mean (p − label)²
	ECE      Float `json:"ece"`      // expected calibration error over 10 equal-width bins
	LogLoss  Float `json:"log_loss"` // mean −log p(label)
	N        int   `json:"n"`
}

// Undefined says why some of s are n/a (NaN, null in JSON), or "" when all
// are defined: no cells were scored, or they hold one class only, so the AUC
// (which compares right with wrong answers) has nothing to compare.
func (s Scores) Undefined() string {
	switch {
	case s.N < 0:
		return "not measured"
	case s.N == 0:
		return "no cells to score"
	case math.IsNaN(float64(s.AUC)):
		return fmt.Sprintf("AUC needs both right and wrong answers; the %d cells hold one kind only", s.N)
	}
	return ""
}
