package irtrun

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/irt/irttest"
	"github.com/jeirt/jeirt/train/irtstat/fitstat"
)

// A fit folder carries the fit statistics (the loss split into the
// log-likelihood and the log-prior, AIC and BIC), every model's person fit
// with the aberrant rows flagged, and the test information; the printed
// summary says them.
func TestFolderFitStatistics(t *testing.T) {
	r, truth := irttest.Gen(t, synth.Options{Kind: "2pl", Models: 120, Items: 50, Seed: 8})
	// Models 0 and 1 answer against their ability: the harder half right.
	for c := range r.Label {
		if i, j := r.Model[c], r.Item[c]; i < 2 {
			r.Label[c] = 0
			if -truth.B[j]/truth.A[j] > 0 {
				r.Label[c] = 1
			}
		}
	}
	for _, prior := range []string{"default", "none"} {
		set := irtfit.Settings{Method: "cbmm", Rank: 1, Sigma: 1, Tol: 1e-6, MaxIter: 1000, Accelerate: true, Level: 0.9, Prior: prior}
		job := FitJob{Settings: set, Data: []string{"sim.csv"}}
		fits, secs, err := job.Run(context.Background(), []*model.Responses{r})
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Analyze(context.Background(), 0, r, fits[0], secs); err != nil {
			t.Fatal(err)
		}
		f := fits[0].Folder
		fs := f.Doc.FitStatistics
		if fs == nil {
			t.Fatalf("prior %s: no fit_statistics", prior)
		}
		// The loss is −(log-likelihood + log-prior), the log-prior 0
		// without a prior.
		if got := -(float64(fs.LogLikelihood) + fs.LogPrior); math.Abs(got-f.Doc.Loss) > 1e-8*f.Doc.Loss || (fs.LogPrior < 0) != (prior == "default") {
			t.Errorf("prior %s: −(%v + %v) = %v, loss %v", prior, fs.LogLikelihood, fs.LogPrior, got, f.Doc.Loss)
		}
		k := 2*50 + 120
		if prior == "none" {
			k -= 2
		}
		if fs.Parameters != k || fs.N != r.Len() || float64(fs.AIC) != -2*float64(fs.LogLikelihood)+2*float64(k) {
			t.Errorf("prior %s: k %d n %d AIC %v, want k %d n %d", prior, fs.Parameters, fs.N, fs.AIC, k, r.Len())
		}
		// The two aberrant rows are flagged; of the 118 consistent ones
		// about 1 in 100 is, by chance (lz* < −2.326, the 1% point).
		chance := 0
		for i, m := range f.Models {
			flagged := strings.Contains(m.Flag, fitstat.FlagPersonMisfit)
			switch {
			case m.PersonFit == nil || i < 2 && (!flagged || !(m.PersonFit.LZStar < -5)):
				t.Errorf("prior %s: model %d: person fit %+v, flag %q", prior, i, m.PersonFit, m.Flag)
			case i >= 2 && flagged:
				chance++
			}
		}
		if chance > 3 {
			t.Errorf("prior %s: %d consistent models flagged person_misfit", prior, chance)
		}
		if len(f.Information) != fitstat.InformationPoints || !(f.Information[60].Information > 0) {
			t.Errorf("prior %s: information %d points", prior, len(f.Information))
		}
		sum := FileFit{Dir: "out", Models: 120, Items: 50, Analysis: fits[0].Analysis}.Summary()
		line := strings.Split(sum, "\n")[1]
		if !strings.HasPrefix(line, "log-likelihood ") || !strings.Contains(line, "(the fit's loss ") || !strings.Contains(line, "model(s) with person misfit (lz* < −2.326): model_001, model_002") {
			t.Errorf("prior %s: summary line %q", prior, line)
		}
	}
}
