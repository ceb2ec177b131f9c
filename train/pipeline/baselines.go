package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
)

// Baselines is what RunBaselines measured on the test cells: the scores of
// the baselines that could predict them, what each could not predict
// (checkpoint.BaselineNote), what validation chose, and kNN's k.
type Baselines struct {
	Scores   map[string]model.Scores
	Notes    map[string]checkpoint.BaselineNote
	Settings map[string]string
	KNNK     int
}

// add scores pred as baseline name, after eval.Fallback has put the named
// fallback on the cells a baseline with needs cannot predict; one that can
// predict none of them is "n/a" (a note, no scores).
func (b *Baselines) add(name string, needs eval.Needs, trainR, testR *model.Responses, pred []float64) {
	newItems, newModels, replaced := eval.Fallback(needs, trainR, testR, pred)
	note := checkpoint.BaselineNote{NewQuestionCells: newItems, NewModelCells: newModels}
	if n := testR.Len(); n > 0 && replaced == n {
		switch {
		case newItems > 0 && newModels > 0:
			note.NA = "unseen questions and models"
		case newItems > 0:
			note.NA = "unseen questions"
		default:
			note.NA = "unseen models"
		}
	}
	if note != (checkpoint.BaselineNote{}) {
		b.Notes[name] = note
	}
	if note.NA == "" {
		b.Scores[name] = eval.ScoreResponses(pred, testR).Scores()
	}
}

// RunBaselines scores the baselines on testR: majority, model_mean, item_mean,
// knn (k chosen on valR; its tables within maxMemory bytes, 0 meaning the
// machine's available memory) and irt_2pl (cBMM, on the run's device). Each
// baseline's cells of questions or models it learned nothing of are
// predicted by a named fallback and counted (Baselines.Notes).
func RunBaselines(ctx context.Context, trainR, valR, testR *model.Responses, features []float32, dim int, device string, maxMemory int64, log progress.Logf) (*Baselines, error) {
	b := &Baselines{Scores: map[string]model.Scores{}, Notes: map[string]checkpoint.BaselineNote{}, Settings: map[string]string{}}
	b.add("majority", eval.Needs{}, trainR, testR, eval.MajorityPredict(trainR, testR))
	b.add("model_mean", eval.Needs{Model: true}, trainR, testR, eval.ModelMeanPredict(trainR, testR))
	b.add("item_mean", eval.Needs{Item: true}, trainR, testR, eval.ItemMeanPredict(trainR, testR))
	start := time.Now()
	pk, k, err := eval.KNN{Features: features, Dim: dim, MaxMemory: maxMemory}.Fit(ctx, trainR, valR, testR)
	if err != nil {
		return nil, err
	}
	b.KNNK = k
	b.add("knn", eval.Needs{Model: true}, trainR, testR, pk)
	log.Printf("baseline knn: k = %d (chosen on validation), %.1fs", k, time.Since(start).Seconds())
	if err := b.runMF(ctx, trainR, valR, testR, features, dim, log); err != nil {
		return nil, err
	}
	start = time.Now()
	// The 2PL as jeirt irt fit makes it: the default prior, guarded, on
	// the run's device where its backend fits a prior, on the CPU where not
	// (a baseline is scored, never refused). device is resolved already.
	irtDevice := device
	if !backend.Implements[backend.CBMMFamily](irtDevice) {
		irtDevice = backend.CPU
	}
	guarded, err := irtguard.Guard{CBMM: irt.CBMM{Device: irtDevice, Prior: model.DefaultPrior}}.Fit(ctx, trainR)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		log.Printf("warning: 2PL baseline failed: %v", err)
		return b, nil
	}
	fit := guarded.Fit
	b.add("irt_2pl", eval.Needs{Item: true, Model: true}, trainR, testR, eval.IRTPredict(fit, trainR, testR))
	log.Printf("baseline irt_2pl: cBMM, prior %s, %d iterations, converged %v, %.1fs", model.DefaultPrior, fit.Iterations, fit.Converged, time.Since(start).Seconds())
	if note := b.Notes["irt_2pl"]; note.NA != "" { // nor can any rank
		b.Notes["irt_mirt"] = note
		return b, nil
	}
	if err := b.runMIRT(ctx, trainR, valR, testR, irtDevice, fit, log); err != nil {
		return nil, err
	}
	return b, nil
}

// MIRTRanks are the ranks the irt_mirt baseline chooses among.
var MIRTRanks = []int{1, 2, 3, 5}

// runMIRT adds the multidimensional 2PL (irt_mirt): fits as jeirt irt fit
// --rank r makes them (guarded cBMM under the default prior, each nesting
// the guarded fit of rank r − 1), the ranks of MIRTRanks tried in order
// and the first whose log loss on the validation cells is not below the
// rank before it ends the climb: the rank before it is kept (rank 1,
// irt_2pl's fit, without validation cells). Validation loss over ranks is
// unimodal on the shipped benchmarks, and a rank-5 guarded fit costs five
// times a rank-2 one, so the climb stops where the data stop paying.
func (b *Baselines) runMIRT(ctx context.Context, trainR, valR, testR *model.Responses, device string, rank1 *model.IRT, log progress.Logf) error {
	start := time.Now()
	valLoss := func(fit *model.IRT) float64 {
		return float64(eval.ScoreResponses(eval.IRTPredict(fit, trainR, valR), valR).LogLoss)
	}
	best, bestFit := 1, rank1
	var tried []string
	if valR.Len() > 0 {
		bestLoss := valLoss(rank1)
		tried = append(tried, fmt.Sprintf("1: %.4f", bestLoss))
		for _, r := range MIRTRanks[1:] {
			g, err := irtguard.Guard{CBMM: irt.CBMM{Device: device, Rank: r, Prior: model.DefaultPrior}}.Fit(ctx, trainR)
			if err != nil {
				if errors.Is(err, context.Canceled) {
					return err
				}
				log.Printf("warning: irt_mirt rank %d failed: %v", r, err)
				break
			}
			loss := valLoss(g.Fit)
			tried = append(tried, fmt.Sprintf("%d: %.4f", r, loss))
			if !(loss < bestLoss) {
				break
			}
			best, bestFit, bestLoss = r, g.Fit, loss
		}
	}
	b.add("irt_mirt", eval.Needs{Item: true, Model: true}, trainR, testR, eval.IRTPredict(bestFit, trainR, testR))
	b.Settings["irt_mirt"] = fmt.Sprintf("rank %d", best)
	log.Printf("baseline irt_mirt: rank %d (validation log loss by rank %s), cBMM, prior %s, converged %v, %.1fs",
		best, strings.Join(tried, ", "), model.DefaultPrior, bestFit.Converged, time.Since(start).Seconds())
	return nil
}

// runMF adds EmbedLLM's matrix factorisation (eval.MF) and torch_measure's
// NCF (eval.NCF): its text form where
// most test cells are of questions without training cells (a split by item
// or benchmark), its free question vectors otherwise.
func (b *Baselines) runMF(ctx context.Context, trainR, valR, testR *model.Responses, features []float32, dim int, log progress.Logf) error {
	start := time.Now()
	seen := make([]bool, trainR.NumItems())
	for _, j := range trainR.Item {
		seen[j] = true
	}
	newCells := 0
	for _, j := range testR.Item {
		if !seen[j] {
			newCells++
		}
	}
	text := 2*newCells > testR.Len()
	res, err := eval.MF{Text: text, Features: features, FeatDim: dim, Seed: 1}.Fit(ctx, trainR, valR, testR)
	if err != nil {
		return err
	}
	form, needs := "free question vectors", eval.Needs{Item: true, Model: true}
	if text {
		form, needs = "text form (question vector = W·x + w0)", eval.Needs{Model: true}
	}
	b.add("mf", needs, trainR, testR, res.Pred)
	b.Settings["mf"] = fmt.Sprintf("%s, d = %d, weight decay %g", form, res.Dim, res.Decay)
	log.Printf("baseline mf: %s, d = %d, weight decay %g (chosen on validation among d %v x %v), %d steps, %.1fs",
		form, res.Dim, res.Decay, eval.MFDims, eval.MFDecays, res.Steps, time.Since(start).Seconds())
	start = time.Now()
	nres, err := eval.NCF{Features: features, FeatDim: dim, Seed: 1}.Fit(ctx, trainR, valR, testR)
	if err != nil {
		return err
	}
	b.add("ncf", eval.Needs{Model: true}, trainR, testR, nres.Pred)
	b.Settings["ncf"] = fmt.Sprintf("best epoch %d of %d", nres.BestEpoch, nres.Epochs)
	log.Printf("baseline ncf: torch_measure's MLP 256-128 on [model vector, question vector], best epoch %d of %d (early-stopped on validation), %.1fs",
		nres.BestEpoch, nres.Epochs, time.Since(start).Seconds())
	return nil
}

// baselineOrder is the table's order of the baselines.
var baselineOrder = []string{"majority", "model_mean", "item_mean", "knn", "irt_2pl", "irt_mirt", "mf", "ncf", "joint"}

// What predicts a baseline's cells of new questions (new models):
// eval.Fallback's rule.
const (
	fallbackNewQuestion = "their model's training accuracy (model_mean)"
	fallbackNewModel    = "their question's training accuracy (item_mean)"
)

// PrintScoreTable writes the test-cell table: JE-IRT then the baselines.
func PrintScoreTable(w io.Writer, m *checkpoint.RunMetrics) {
	if m.SplitBy == "model" {
		fmt.Fprintf(w, "\nheld-out models (%d, not in the trained table): %s\n", len(m.HeldOutModels), strings.Join(m.HeldOutModels, ", "))
		fmt.Fprintf(w, "new-model experiment: each onboarded from %.0f%% of its cells, scored on the rest\n", 100*m.OnboardFraction)
		if len(m.NewModels) > 0 {
			width := 40 // wider for longer model names, so the columns stay aligned
			for _, n := range m.NewModels {
				width = max(width, len(n.Name))
			}
			fmt.Fprintf(w, "%-*s %6s %6s %9s %10s %8s  %-26s %6s\n", width, "model", "fit", "scored", "onboarded", "model_mean", "joint", "score [95% interval]", "true")
			for _, n := range m.NewModels {
				joint := "-"
				if n.Joint != nil {
					joint = fmt.Sprintf("%.4f", n.Joint.Accuracy)
				}
				score := "-"
				if s := n.Score; s != nil {
					score = fmt.Sprintf("%.4f [%.4f, %.4f]", s.Score, s.Lo, s.Hi)
				}
				fmt.Fprintf(w, "%-*s %6d %6d %9.4f %10.4f %8s  %-26s %6.4f\n", width, n.Name, n.FitCells, n.ScoredCells, n.Onboarded.Accuracy, n.ModelMean.Accuracy, joint, score, n.TrueScore)
			}
			if m.ScoreCoverage != nil {
				fmt.Fprintf(w, "score intervals covering the true score (the model's mean over all its cells): %.0f%% of %d models; score MAE %.4f\n",
					100**m.ScoreCoverage, len(m.NewModels), *m.ScoreMAE)
			}
		}
	}
	if a := m.Alignment; a != nil {
		fmt.Fprintf(w, "\nheld-out benchmark(s): %s; alignment: cosine(held-out, training mean question direction) = %.4f, nearest training benchmark %s (%.4f)\n",
			strings.Join(m.HeldOutBenchmarks, ", "), model.Float(a.Cosine), a.Nearest, model.Float(a.PerBenchmark[a.Nearest]))
	}
	fmt.Fprintf(w, "\ntest cells: %d (split by %s)\n", m.Test.N, m.SplitBy)
	fmt.Fprintf(w, "%-12s %8s %8s %8s %8s %8s\n", "method", "accuracy", "AUC", "logloss", "Brier", "ECE")
	var notes []string
	row := func(name string, s model.Scores) {
		fmt.Fprintf(w, "%-12s %8.4f %8.4f %8.4f %8.4f %8.4f\n", name, s.Accuracy, s.AUC, s.LogLoss, s.Brier, s.ECE)
		if why := s.Undefined(); why != "" && !slices.Contains(notes, why) {
			notes = append(notes, why)
		}
	}
	name := "jeirt"
	if m.SplitBy == "model" {
		name = "jeirt (onb.)"
	}
	row(name, m.Test)
	var names []string
	for n := range m.Baselines {
		names = append(names, n)
	}
	for n, note := range m.BaselineNotes {
		if note.NA != "" {
			names = append(names, n)
		}
	}
	rank := func(n string) int {
		if k := slices.Index(baselineOrder, n); k >= 0 {
			return k
		}
		return len(baselineOrder)
	}
	sort.Slice(names, func(a, b int) bool {
		if ra, rb := rank(names[a]), rank(names[b]); ra != rb {
			return ra < rb
		}
		return names[a] < names[b]
	})
	var fallbacks []string
	for _, n := range names {
		note := m.BaselineNotes[n]
		if note.NA != "" {
			fmt.Fprintf(w, "%-12s n/a (%s)\n", n, note.NA)
			continue
		}
		label := n
		if n == "knn" {
			label = fmt.Sprintf("knn (k=%d)", m.KNNK)
		}
		row(label, m.Baselines[n])
		if note.NewQuestionCells > 0 {
			fallbacks = append(fallbacks, fmt.Sprintf("%s: %d of the %d test cells are of questions without training cells, predicted by %s", n, note.NewQuestionCells, m.Test.N, fallbackNewQuestion))
		}
		if note.NewModelCells > 0 {
			fallbacks = append(fallbacks, fmt.Sprintf("%s: %d of the %d test cells are of models without training cells, predicted by %s", n, note.NewModelCells, m.Test.N, fallbackNewModel))
		}
	}
	for _, f := range fallbacks {
		fmt.Fprintf(w, "fallback: %s\n", f)
	}
	var set []string
	for _, n := range names {
		if s, ok := m.BaselineSettings[n]; ok && m.BaselineNotes[n].NA == "" {
			set = append(set, n+": "+s)
		}
	}
	if len(set) > 0 {
		fmt.Fprintf(w, "chosen on validation: %s\n", strings.Join(set, "; "))
	}
	for _, why := range notes {
		fmt.Fprintf(w, "n/a: %s\n", why)
	}
	if m.Scoring != "" {
		fmt.Fprintf(w, "scoring: %s\n", m.Scoring)
	}
	fmt.Fprintf(w, "geometry: Spearman(|q|, item error rate) = %.3f over %d items", m.Geometry.NormErrorSpearman, m.Geometry.Items)
	if m.Geometry.NormErrorNote != "" {
		fmt.Fprintf(w, " (n/a: %s)", m.Geometry.NormErrorNote)
	}
	fmt.Fprintln(w)
}
