package catrun

import (
	"context"
	"io"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/cat"
	"github.com/jeirt/jeirt/train/catbank"
	"github.com/jeirt/jeirt/train/irtstat"
)

// Place is jeirt add-model --fit: it places the models of Data in the fit
// folder Fit from whatever answers they have to its items, the items held
// as they are (nothing is refitted), and writes rows of the fit's
// abilities.csv form. The zero value needs Fit and Data.
type Place struct {
	Fit       string
	Data      string
	Read      read.Options
	Models    []string // default: every model of Data with an answer
	Estimator string   // cat.MAP ("") or cat.EAP
	// Level of the lo/hi interval, θ ± z·SE; 0 means the fit's level
	// (0.95 when it has none).
	Level float64
	Out   string // CSV ("": only w)
	Force bool
	Log   progress.Logf
}

// Placed is one placed model.
type Placed struct {
	irtfit.Model
	Answers int // answers to the fit's items used
	InFit   bool
}

// Run places the models and writes the rows to Out (atomically) or, when
// Out is "", to w.
func (p Place) Run(ctx context.Context, w io.Writer) ([]Placed, error) {
	if err := checkOut(p.Out, p.Force); err != nil {
		return nil, err
	}
	f, err := catbank.Load(p.Fit)
	if err != nil {
		return nil, err
	}
	if p.Estimator == cat.EAP && f.Bank.Rank > 1 {
		return nil, model.FieldErrorf("Estimator", "{Estimator} eap is rank 1 only (the fit has rank %d); use map", f.Bank.Rank)
	}
	level := p.Level
	if level == 0 {
		level = f.Folder.Doc.Settings.Level
	}
	if level == 0 {
		level = 0.95
	}
	if !(level > 0 && level < 1) {
		return nil, model.FieldErrorf("Level", "{Level} %v must be in (0, 1)", level)
	}
	r, err := catbank.ReadResponses(p.Data, p.Read, p.Log)
	if err != nil {
		return nil, err
	}
	models, items, ys, err := f.AnswersOf(r, p.Data, p.Models, p.Log)
	if err != nil {
		return nil, err
	}
	z := distuv.UnitNormal.Quantile((1 + level) / 2)
	rk := f.Bank.Rank
	// The fit's models' scores and accuracies, to rank the new ones among.
	var scores, accs []float64
	inFit := map[string]bool{}
	for _, m := range f.Folder.Models {
		inFit[m.Name] = true
		if m.Rank > 0 {
			scores, accs = append(scores, m.Score), append(accs, m.Accuracy)
		}
	}
	rankAmong := func(x float64, of []float64) int {
		n := 1
		for _, v := range of {
			if v > x {
				n++
			}
		}
		return n
	}
	fitIRT := f.Folder.IRT()
	var out []Placed
	var rows []irtfit.Model
	for k, name := range models {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		th, se, err := cat.Estimate(f.Bank, f.Prior, p.Estimator, items[k], ys[k])
		if err != nil {
			return nil, err
		}
		m := irtfit.Model{Name: name, Theta: th, SE: se, Lo: make([]float64, rk), Hi: make([]float64, rk), NObs: len(items[k])}
		for d := 0; d < rk; d++ {
			m.Lo[d], m.Hi[d] = th[d]-z*se[d], th[d]+z*se[d]
		}
		m.Score = th[0]
		if rk > 1 {
			one := &model.IRT{Rank: rk, Sigma: fitIRT.Sigma, Theta: th, A: fitIRT.A, B: fitIRT.B}
			m.Score = irtstat.AbilityScore(one)[0]
		}
		m.Rank = rankAmong(m.Score, scores)
		if rk == 1 {
			m.RankLo, m.RankHi = rankAmong(m.Hi[0], scores), rankAmong(m.Lo[0], scores)
		}
		right := 0
		for _, y := range ys[k] {
			right += int(y)
		}
		m.Accuracy = float64(right) / float64(len(ys[k]))
		m.AccuracyRank = rankAmong(m.Accuracy, accs)
		out = append(out, Placed{Model: m, Answers: len(items[k]), InFit: inFit[name]})
		rows = append(rows, m)
		p.Log.Printf("%s: θ %s ± %s from %d answers to the fit's items (%d right)", name, catbank.FormatVector(th), catbank.FormatVector(se), len(items[k]), right)
	}
	var again []string
	for _, pl := range out {
		if pl.InFit {
			again = append(again, pl.Name)
		}
	}
	if len(again) > 0 {
		p.Log.Printf("add-model: %d of these models are already in the fit (placed again from these answers): %s", len(again), strings.Join(again[:min(5, len(again))], ", "))
	}
	p.Log.Printf("add-model: theta is the %s, se its posterior sd, lo/hi theta -+ %.3g se (level %g); rank, rank_lo/rank_hi (the ranks at hi and lo) and accuracy_rank place each model among the fit's %d models; the fit's items are not refitted",
		estimatorShort(p.Estimator), z, level, len(scores))
	write := func(w io.Writer) error { return irtfit.WriteAbilities(w, rk, rows) }
	if p.Out == "" {
		return out, write(w)
	}
	if err := fileio.WriteFileAtomic(p.Out, write); err != nil {
		return nil, err
	}
	p.Log.Printf("wrote %d rows of abilities.csv to %s", len(rows), p.Out)
	return out, nil
}

func estimatorShort(e string) string {
	if e == cat.EAP {
		return "posterior mean (EAP) under the fit's prior"
	}
	return "posterior mode (MAP) under the fit's prior"
}
