package catrun

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/catfile"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/catbank"
	"github.com/jeirt/jeirt/train/eval"
)

// CAT is jeirt irt cat. With Data it simulates: each of Models (default:
// the models of Data the fit does not have) is tested by replaying its
// known answers, never asked an item it has no answer to, and compared with
// its θ from all of them. Otherwise it is live: the models of Answers (or a
// new model with no answers yet) get their next Next questions. The zero
// value needs Fit and Data or Next.
type CAT struct {
	Fit     string
	Data    string // simulate: the responses replayed
	Answers string // live: the answers so far ("": none yet)
	Models  []string
	Read    read.Options
	Test    cat.Test
	Next    int    // live: how many questions to emit
	Groups  string // item-group CSV for content balancing ("": none)
	// ExcludeFlagged never asks an item with a flag in the fit's items.csv.
	ExcludeFlagged bool
	GroupColumn    string
	Seed           int64
	Out            string // folder ("": none)
	Force          bool
	Version        string
	Log            progress.Logf
	// TargetScoreWidth (0: none) stops a simulated test once the 95%
	// interval of the model's score on the whole bank is at most this wide.
	TargetScoreWidth float64
}

// CATResult is what a run did.
type CATResult struct {
	Doc       *catfile.Doc
	Rank      int
	Abilities []catfile.Ability
	Trace     []catfile.Step
	Next      []catfile.Question
}

// Run runs the tests and writes Out; w receives the next questions (live)
// as a next.csv.
func (c CAT) Run(ctx context.Context, w io.Writer) (*CATResult, error) {
	live := c.Data == ""
	switch {
	case c.Fit == "":
		return nil, model.FieldErrorf("Fit", "{Fit} is required")
	case c.Next < 0:
		return nil, model.FieldErrorf("Next", "{Next} %d: give the number of questions to ask next, at least 1", c.Next)
	case live && c.Next < 1:
		return nil, model.FieldErrorf("Data", "give {Data} FILE (simulate: replay held-out models' answers) or {Next} N (live: the next N questions to ask)")
	case !live && (c.Answers != "" || c.Next > 0):
		return nil, model.FieldErrorf("Data", "{Data} (simulate) cannot go with {Answers} or {Next} (live)")
	case !live && c.Test.Budget == 0 && c.Test.TargetSE == 0 && c.TargetScoreWidth == 0:
		return nil, model.FieldErrorf("Budget", "give {Budget} N or {TargetSE} S (or both): when to stop each simulated test")
	case c.GroupColumn != "" && c.Groups == "":
		return nil, model.FieldErrorf("GroupColumn", "{GroupColumn} goes with {Groups} FILE")
	}
	if err := checkOut(c.Out, c.Force); err != nil {
		return nil, err
	}
	f, err := catbank.Load(c.Fit)
	if err != nil {
		return nil, err
	}
	if c.Groups != "" {
		if err := f.SetGroups(c.Groups, c.GroupColumn); err != nil {
			return nil, err
		}
		c.Test.Balance = true
	}
	pool, err := c.Test.Prepare(f.Bank)
	if err != nil {
		return nil, err
	}
	if c.ExcludeFlagged {
		f.Usable = make([]bool, f.Bank.NumItems())
		n := 0
		for j, it := range f.Folder.Items {
			if f.Usable[j] = it.Flag == ""; !f.Usable[j] {
				n++
			}
		}
		c.Log.Printf("irt cat: %d of the fit's %d items are flagged and never asked", n, len(f.Usable))
	}
	est := c.Test.Estimator
	if est == "" {
		est = cat.MAP
	}
	rule := c.Test.Rule
	if rule == "" {
		rule = cat.Fisher
	}
	res := &CATResult{Rank: f.Bank.Rank, Doc: &catfile.Doc{Version: c.Version, Mode: "simulate", Theta: f.EstimatorText(est),
		PriorMean: f.Prior.Mean, PriorCov: f.Prior.Cov, Items: f.Bank.NumItems(),
		Settings: catfile.Settings{Fit: c.Fit, Data: c.Data, Answers: c.Answers, Rule: rule, Estimator: est, Budget: c.Test.Budget,
			TargetSE: c.Test.TargetSE, TargetScoreWidth: c.TargetScoreWidth, MinItems: c.Test.MinItems, ExcludeFlagged: c.ExcludeFlagged, Next: c.Next, Groups: c.Groups, GroupCol: c.GroupColumn, Balance: c.Test.Balance,
			KLWidth: c.Test.KLWidth, Seed: c.Seed}}}
	if live {
		res.Doc.Mode = "live"
		c.Log.Printf("irt cat: rule %s; theta: %s", rule, res.Doc.Theta)
		err = c.live(ctx, f, pool, res)
	} else {
		err = c.simulate(ctx, f, pool, res)
	}
	if err != nil {
		return nil, err
	}
	if live {
		if err := catfile.WriteNext(w, res.Next); err != nil {
			return nil, err
		}
	}
	if c.Out != "" {
		if !live {
			res.Next = nil
		} else if res.Next == nil {
			res.Next = []catfile.Question{}
		}
		folder := &catfile.Folder{Doc: res.Doc, Rank: res.Rank, Abilities: res.Abilities, Trace: res.Trace, Next: res.Next}
		if err := fileio.WriteDirAtomic(c.Out, c.Force, func(tmp string) error { return catfile.Write(tmp, folder) }); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// step is a trace row of session s for model name after its last answer.
func step(s *cat.Session, fit *catbank.Fit, name string, item int, y int, value float64) catfile.Step {
	st := catfile.Step{Model: name, Step: s.NumAsked(), Answer: y, Value: value, Theta: s.Theta(), SE: s.SE()}
	if item >= 0 {
		st.Item, st.Group = fit.Folder.Items[item].ID, fit.GroupOf(item)
	}
	return st
}

func (c CAT) simulate(ctx context.Context, f *catbank.Fit, pool *cat.Pool, res *CATResult) error {
	r, err := catbank.ReadResponses(c.Data, c.Read, c.Log)
	if err != nil {
		return err
	}
	models := c.Models
	if len(models) == 0 {
		fitted := map[string]bool{}
		for _, m := range f.Folder.Models {
			fitted[m.Name] = true
		}
		for i, m := range r.Models {
			if !fitted[m] && len(r.ByModel().Row(i)) > 0 {
				models = append(models, m)
			}
		}
		if len(models) == 0 {
			return model.FieldErrorf("Models", "%s: every model is in the fit %s; name the models to test with {Models}", c.Data, c.Fit)
		}
	}
	inFit := map[string]bool{}
	for _, m := range f.Folder.Models {
		inFit[m.Name] = true
	}
	var fitted []string
	for _, m := range models {
		if inFit[m] {
			fitted = append(fitted, m)
		}
	}
	if len(fitted) > 0 {
		c.Log.Printf("irt cat: %d of the models tested are in the fit, so their answers shaped its items (not a held-out check): %s", len(fitted), strings.Join(fitted[:min(5, len(fitted))], ", "))
	}
	models, items, ys, err := f.AnswersOf(r, c.Data, models, c.Log)
	if err != nil {
		return err
	}
	res.Doc.Settings.Models = models
	J := f.Bank.NumItems()
	sc, err := scorer(f)
	if err != nil {
		return err
	}
	for k, name := range models {
		if err := ctx.Err(); err != nil {
			return err
		}
		eligible := make([]bool, J)
		answer := make([]uint8, J)
		for n, j := range items[k] {
			eligible[j], answer[j] = f.Usable == nil || f.Usable[j], ys[k][n]
		}
		s, err := pool.Start(f.Prior, eligible, modelSeed(c.Seed, name))
		if err != nil {
			return err
		}
		res.Trace = append(res.Trace, step(s, f, name, -1, -1, math.NaN()))
		stop := ""
		for stop == "" {
			p, ok := s.Next()
			if !ok {
				break
			}
			if err := s.Answer(p.Item, answer[p.Item]); err != nil {
				return err
			}
			res.Trace = append(res.Trace, step(s, f, name, p.Item, int(answer[p.Item]), p.Value))
			if c.TargetScoreWidth > 0 && s.NumAsked() >= c.Test.MinItems {
				if x, _, err := scoreNow(sc, s); err != nil {
					return err
				} else if x.Hi-x.Lo <= c.TargetScoreWidth {
					stop = StopTargetScoreWidth
				}
			}
		}
		if stop == "" {
			stop = s.Stop()
		}
		if _, line, err := scoreNow(sc, s); err == nil {
			c.Log.Printf("%s: %d items asked; %s", name, s.NumAsked(), line)
		}
		full, fullSE, err := cat.Estimate(f.Bank, f.Prior, c.Test.Estimator, items[k], ys[k])
		if err != nil {
			return err
		}
		res.Abilities = append(res.Abilities, catfile.Ability{Model: name, Theta: s.Theta(), SE: s.SE(), ItemsUsed: s.NumAsked(),
			Stop: stop, ThetaFull: full, SEFull: fullSE, ItemsFull: len(items[k])})
	}
	res.Doc.Summary = Summarize(res.Abilities)
	return nil
}

// Summarize compares the tests' θ with the full-data θ (the first
// dimension): Spearman's ρ and Pearson's r over the models, the RMSE, and
// the items used.
func Summarize(rows []catfile.Ability) *catfile.Summary {
	s := &catfile.Summary{Models: len(rows), Stops: map[string]int{}, MinItems: math.MaxInt}
	var th, full []float64
	var se2, ms, fi float64
	for _, a := range rows {
		th, full = append(th, a.Theta[0]), append(full, a.ThetaFull[0])
		d := a.Theta[0] - a.ThetaFull[0]
		ms += d * d
		se2 += a.SE[0]
		fi += float64(a.ItemsFull)
		s.MeanItems += float64(a.ItemsUsed)
		s.MinItems, s.MaxItems = min(s.MinItems, a.ItemsUsed), max(s.MaxItems, a.ItemsUsed)
		s.Stops[a.Stop]++
	}
	n := float64(len(rows))
	s.Spearman, s.Pearson = model.Float(eval.Spearman(th, full)), model.Float(eval.Pearson(th, full))
	if math.IsNaN(float64(s.Spearman)) || math.IsNaN(float64(s.Pearson)) {
		s.CorrelationNote = eval.CorrelationNote("the tests' theta", th, "the full-data theta", full)
	}
	s.RMSE, s.MeanSE = model.Float(math.Sqrt(ms/n)), model.Float(se2/n)
	s.MeanItems, s.FullItems = s.MeanItems/n, fi/n
	return s
}

func (c CAT) live(ctx context.Context, f *catbank.Fit, pool *cat.Pool, res *CATResult) error {
	var models []string
	var items [][]int
	var ys [][]uint8
	if c.Answers != "" {
		r, err := catbank.ReadResponses(c.Answers, c.Read, c.Log)
		if err != nil {
			return err
		}
		if models, items, ys, err = f.AnswersOf(r, c.Answers, c.Models, c.Log); err != nil {
			return err
		}
	} else {
		switch len(c.Models) {
		case 0:
			models = []string{"new"}
		case 1:
			models = c.Models
		default:
			return model.FieldErrorf("Models", "{Models}: without {Answers} there is one new model to ask (got %d names)", len(c.Models))
		}
		items, ys = [][]int{nil}, [][]uint8{nil}
	}
	res.Doc.Settings.Models = models
	sc, err := scorer(f)
	if err != nil {
		return err
	}
	for k, name := range models {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Answers to flagged items still count; they are only never asked.
		s, err := pool.Start(f.Prior, nil, modelSeed(c.Seed, name))
		if err != nil {
			return err
		}
		res.Trace = append(res.Trace, step(s, f, name, -1, -1, math.NaN()))
		for n, j := range items[k] {
			if err := s.Answer(j, ys[k][n]); err != nil {
				return fmt.Errorf("%s: model %q: %w", c.Answers, name, err)
			}
			res.Trace = append(res.Trace, step(s, f, name, j, int(ys[k][n]), math.NaN()))
		}
		th := s.Theta()
		if f.Usable != nil {
			s.Exclude(f.Usable)
		}
		for rank, p := range s.Plan(c.Next) {
			prob := f.Bank.Prob(p.Item, th)
			res.Next = append(res.Next, catfile.Question{Model: name, Rank: rank + 1, Item: f.Folder.Items[p.Item].ID,
				Group: f.GroupOf(p.Item), Value: p.Value, P: prob})
		}
		stop := s.Stop()
		res.Abilities = append(res.Abilities, catfile.Ability{Model: name, Theta: th, SE: s.SE(), ItemsUsed: s.NumAsked(), Stop: stop})
		line := fmt.Sprintf("%s: %d answers, θ %s, SE %s", name, s.NumAsked(), catbank.FormatVector(th), catbank.FormatVector(s.SE()))
		if _, score, err := scoreNow(sc, s); err == nil {
			line += "; " + score
		}
		if stop != "" {
			line += "; the test is over (" + stopWords(stop, c.Test) + ")"
		}
		c.Log.Printf("%s", line)
	}
	return nil
}

func stopWords(stop string, t cat.Test) string {
	switch stop {
	case cat.StopBudget:
		return fmt.Sprintf("the budget of %d items is spent", t.Budget)
	case cat.StopTargetSE:
		return fmt.Sprintf("the standard error is at most the target %g", t.TargetSE)
	}
	return "no item is left to ask"
}

// WriteSummary prints the simulation's table: one row per model (θ and SE
// from the test and from all answers, items used, why it stopped), then
// the comparison.
func WriteSummary(w io.Writer, res *CATResult) error {
	d := res.Doc
	s := d.Settings
	stop := []string{}
	if s.Budget > 0 {
		stop = append(stop, fmt.Sprintf("budget %d items", s.Budget))
	}
	if s.TargetSE > 0 {
		stop = append(stop, fmt.Sprintf("target SE %g", s.TargetSE))
	}
	bal := ""
	if s.Balance {
		bal = ", content-balanced by " + s.Groups
	}
	fmt.Fprintf(w, "irt cat: rule %s%s, %s; %d models, bank of %d items\n", s.Rule, bal, strings.Join(stop, " or "), len(res.Abilities), d.Items)
	fmt.Fprintf(w, "theta: %s\n", d.Theta)
	width := 24
	for _, a := range res.Abilities {
		width = max(width, len(a.Model))
	}
	fmt.Fprintf(w, "%-*s %9s %7s %6s  %-9s %9s %7s %6s\n", width, "model", "theta", "se", "items", "stop", "full", "se", "items")
	for _, a := range res.Abilities {
		fmt.Fprintf(w, "%-*s %9.4f %7.4f %6d  %-9s %9.4f %7.4f %6d\n", width, a.Model, a.Theta[0], a.SE[0], a.ItemsUsed, a.Stop, a.ThetaFull[0], a.SEFull[0], a.ItemsFull)
	}
	m := d.Summary
	dim := ""
	if res.Rank > 1 {
		dim = " (dimension 1)"
	}
	why := ""
	if m.CorrelationNote != "" {
		why = " (" + m.CorrelationNote + ")"
	}
	_, err := fmt.Fprintf(w, "against the full-data theta%s: Spearman %.4f, Pearson %.4f%s, RMSE %.4f; items used %.1f (%d-%d) of %.1f answered, mean SE %.4f; stops: %s\n",
		dim, m.Spearman, m.Pearson, why, m.RMSE, m.MeanItems, m.MinItems, m.MaxItems, m.FullItems, m.MeanSE, sortedKeys(m.Stops))
	return err
}
