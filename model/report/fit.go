package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
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

	Models []FitModel
	Items  []FitItem
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
}

// Move is how many places the IRT rank is above the accuracy rank.
func (m FitModel) Move() int { return m.AccuracyRank - m.Rank }

// FitItem is one row of items.csv.
type FitItem struct {
	ID       string
	A        []float64 // a_j (r values)
	B        float64
	PCorrect float64
	NObs     int
	Flag     string // "", never_solved, always_solved or uninformative
	Text     string // question text, when the fit was given an item-text CSV that can still be read
	Group    string // item group (see itemGroups)
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

// fitJSON is the part of fit.json the report reads.
type fitJSON struct {
	Settings struct {
		Data      string  `json:"data"`
		Items     string  `json:"items"`
		Rank      int     `json:"rank"`
		Sigma     float64 `json:"sigma"`
		MinA      float64 `json:"min_discrimination"`
		Bootstrap int     `json:"bootstrap"`
	} `json:"settings"`
	Observed   int      `json:"observed"`
	Iterations int      `json:"iterations"`
	Tau        *float64 `json:"kendall_tau_vs_accuracy"`
}

// ReadFit reads a folder written by `jeirt irt fit`.
func ReadFit(dir string) (*Fit, error) {
	p := filepath.Join(dir, "fit.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a jeirt irt fit folder: no fit.json", dir)
		}
		return nil, err
	}
	var doc fitJSON
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	s := doc.Settings
	if s.Rank < 1 {
		return nil, fmt.Errorf("%s: settings.rank %d is not a rank", p, s.Rank)
	}
	f := &Fit{Dir: dir, Data: s.Data, ItemFile: s.Items, Rank: s.Rank, Sigma: s.Sigma, MinA: s.MinA, Observed: doc.Observed,
		Iter: doc.Iterations, Boot: s.Bootstrap, Tau: math.NaN()}
	if f.Sigma <= 0 {
		f.Sigma = 1
	}
	if f.MinA <= 0 {
		f.MinA = 0.1
	}
	if doc.Tau != nil {
		f.Tau = *doc.Tau
	}
	cols := func(name string) []string {
		if f.Rank == 1 {
			return []string{name}
		}
		out := make([]string, f.Rank)
		for d := range out {
			out[d] = fmt.Sprintf("%s_%d", name, d+1)
		}
		return out
	}
	err = readCSV(filepath.Join(dir, "abilities.csv"), func(get rowGetter) error {
		m := FitModel{Name: get.str("model"), SE: math.NaN()}
		for _, c := range cols("theta") {
			m.Theta = append(m.Theta, get.num(c))
		}
		if f.Rank == 1 {
			m.Score, m.SE = m.Theta[0], get.optNum("se")
		} else {
			m.Score = get.num("score")
		}
		m.Rank, m.RankLo, m.RankHi = get.int("rank"), get.optInt("rank_lo"), get.optInt("rank_hi")
		m.Accuracy, m.AccuracyRank = get.num("accuracy"), get.int("accuracy_rank")
		f.Models = append(f.Models, m)
		return get.err
	})
	if err != nil {
		return nil, err
	}
	err = readCSV(filepath.Join(dir, "items.csv"), func(get rowGetter) error {
		it := FitItem{ID: get.str("item"), B: get.num("b"), PCorrect: get.optNum("p_correct"), NObs: get.optInt("n_obs"), Flag: get.str("flag")}
		for _, c := range cols("a") {
			it.A = append(it.A, get.num(c))
		}
		f.Items = append(f.Items, it)
		return get.err
	})
	if err != nil {
		return nil, err
	}
	if len(f.Models) == 0 || len(f.Items) == 0 {
		return nil, fmt.Errorf("%s: no models or no items", dir)
	}
	return f, nil
}

// rowGetter reads the fields of one CSV row by column name; the first
// problem is kept in err and names the file, line and column.
type rowGetter struct {
	*rowState
}

type rowState struct {
	path   string
	line   int
	header map[string]int
	rec    []string
	err    error
}

func (g rowGetter) raw(col string, required bool) (string, bool) {
	k, ok := g.header[col]
	if !ok {
		if required && g.err == nil {
			g.err = fmt.Errorf("%s: no column %q", g.path, col)
		}
		return "", false
	}
	return strings.TrimSpace(g.rec[k]), true
}

func (g rowGetter) str(col string) string {
	v, _ := g.raw(col, col != "flag")
	return v
}

func (g rowGetter) parse(col string, required bool) float64 {
	v, ok := g.raw(col, required)
	if !ok || v == "" {
		if ok && required && g.err == nil {
			g.err = fmt.Errorf("%s:%d: column %q is empty", g.path, g.line, col)
		}
		return math.NaN()
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil && g.err == nil {
		g.err = fmt.Errorf("%s:%d: column %q: %q is not a number", g.path, g.line, col, v)
	}
	return x
}

func (g rowGetter) num(col string) float64    { return g.parse(col, true) }
func (g rowGetter) optNum(col string) float64 { return g.parse(col, false) }

func (g rowGetter) int(col string) int {
	x := g.parse(col, true)
	if math.IsNaN(x) {
		return 0
	}
	return int(x)
}

func (g rowGetter) optInt(col string) int {
	x := g.parse(col, false)
	if math.IsNaN(x) {
		return 0
	}
	return int(x)
}

// readCSV calls row for every record of a CSV file with a header.
func readCSV(path string, row func(rowGetter) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	st := &rowState{path: path, header: map[string]int{}}
	for k, h := range head {
		st.header[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = k
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		st.line, st.rec = line, rec
		if err := row(rowGetter{st}); err != nil {
			return err
		}
	}
}

// IRT returns the fitted parameters as a model.IRT (θ, A and b in the fit's gauge).
func (f *Fit) IRT() *model.IRT {
	m := &model.IRT{Rank: f.Rank, Sigma: f.Sigma, Iterations: f.Iter}
	for _, fm := range f.Models {
		m.Models = append(m.Models, fm.Name)
		m.Theta = append(m.Theta, fm.Theta...)
	}
	for _, it := range f.Items {
		m.Items = append(m.Items, it.ID)
		m.A = append(m.A, it.A...)
		m.B = append(m.B, it.B)
	}
	return m
}
