package report

import (
	"math"

	"github.com/jeirt/jeirt/model/irtfit"
)

// Fit is a folder written by `jeirt irt fit`, as the report reads it:
// abilities.csv, items.csv and fit.json.
type Fit struct {
	Dir      string
	Data     string  // settings.data: the response file that was fitted
	ItemFile string  // settings.items: the item-text CSV given to the fit, if any
	Rank     int     // r
	Sigma    float64 // σ
	MinA     float64 // the discrimination below which items are flagged uninformative
	Observed int
	Iter     int
	Tau      float64 // Kendall τ between θ and accuracy (NaN when absent)
	Boot     int     // bootstrap replicates
	// Test diagnostics of fit.json (NaN when absent or undefined).
	Alpha, MarginalRel float64
	HasDiagnostics     bool // items.csv has the diagnostic columns

	Models []FitModel
	Items  []FitItem
	// Information is the test information along θ (information.csv, or
	// computed from the items; nil at rank > 1), and Stats fit.json's
	// fit_statistics (nil in folders written before them).
	Information []irtfit.InformationPoint
	Stats       *irtfit.FitStatistics
}

// FitModel is one row of abilities.csv.
type FitModel struct {
	Name         string
	Theta        []float64 // θ_i (r values)
	Score        float64   // θ at r = 1, the score column at r > 1
	SE           float64   // bootstrap SE of the score (NaN without bootstrap)
	Rank         int       // rank by Score, 1 = best
	RankLo       int       // bootstrap rank interval (0 without bootstrap)
	RankHi       int
	Accuracy     float64 // mean correct over the model's observed items
	AccuracyRank int
	NObs         int    // observed answers
	Flag         string // "", few_answers (not ranked), person_misfit, joined by ";"
	// LZStar, Infit and Outfit are the person fit of abilities.csv (NaN when absent).
	LZStar, Infit, Outfit float64
}

// Move is how many places the IRT rank is above the accuracy rank.
func (m FitModel) Move() int { return m.AccuracyRank - m.Rank }

// FitItem is one row of items.csv.
type FitItem struct {
	ID       string
	A        []float64 // a_j (r values)
	D        float64   // intercept d_j (mirt's slope-intercept form)
	B        float64   // difficulty −d/a (−d/‖a‖ at rank > 1); NaN when a = 0
	PCorrect float64
	NObs     int
	Flag     string // "", or flags joined by ";" (never_solved, always_solved, uninformative, misfit, negative_item_total, weak_item_total)
	// ItemRest, Infit and Outfit are the diagnostics of items.csv (NaN when absent).
	ItemRest, Infit, Outfit float64
	C                       float64 // the 3PL's lower asymptote (0 without one)
	Text                    string  // question text, when the fit was given an item-text CSV that can still be read
	Group                   string  // item group (see itemGroups)
}

// Discrimination is ‖a_j‖/σ, the slope of the item characteristic curve in
// units of the logit.
func (f *Fit) Discrimination(j int) float64 {
	var s float64
	for _, a := range f.Items[j].A {
		s += a * a
	}
	return math.Sqrt(s) / f.Sigma
}

// ReadFit reads a folder written by `jeirt irt fit` (see package irtfit).
func ReadFit(dir string) (*Fit, error) {
	src, err := irtfit.Read(dir)
	if err != nil {
		return nil, err
	}
	s := src.Doc.Settings
	f := &Fit{Dir: dir, Data: s.Data, ItemFile: s.Items, Rank: s.Rank, Sigma: src.Sigma(), MinA: s.MinA,
		Observed: src.Doc.Observed, Iter: src.Doc.Iterations, Boot: s.Bootstrap, Tau: float64(src.Doc.KendallTau)}
	if f.MinA <= 0 {
		f.MinA = 0.1
	}
	f.Alpha, f.MarginalRel = math.NaN(), math.NaN()
	if d := src.Doc.Diagnostics; d != nil {
		f.Alpha, f.MarginalRel = float64(d.CronbachAlpha), float64(d.MarginalReliability)
	}
	f.Information, f.Stats = fitInformation(src), src.Doc.FitStatistics
	for _, m := range src.Models {
		fm := FitModel{Name: m.Name, Theta: m.Theta, Score: m.Score, SE: math.NaN(), Rank: m.Rank, RankLo: m.RankLo,
			RankHi: m.RankHi, Accuracy: m.Accuracy, AccuracyRank: m.AccuracyRank, NObs: m.NObs, Flag: m.Flag}
		if f.Rank == 1 {
			fm.SE = m.SE[0]
		}
		fm.LZStar, fm.Infit, fm.Outfit = math.NaN(), math.NaN(), math.NaN()
		if pf := m.PersonFit; pf != nil {
			fm.LZStar, fm.Infit, fm.Outfit = pf.LZStar, pf.Infit, pf.Outfit
		}
		f.Models = append(f.Models, fm)
	}
	for _, it := range src.Items {
		f.Items = append(f.Items, FitItem{ID: it.ID, A: it.A, D: it.D, B: it.B, PCorrect: it.PCorrect, NObs: it.NObs, Flag: it.Flag,
			ItemRest: it.ItemRest, Infit: it.Infit, Outfit: it.Outfit})
		if s.Family().HasAsymptote() {
			f.Items[len(f.Items)-1].C = it.C
		}
		f.HasDiagnostics = f.HasDiagnostics || !math.IsNaN(it.ItemRest) || !math.IsNaN(it.Infit)
	}
	return f, nil
}
