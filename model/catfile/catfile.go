// Package catfile owns the files of `jeirt irt cat`, each with its reader
// and writer side by side:
//
//	abilities.csv  one row per model: the final θ, its standard error, the
//	               items used and why the test stopped (with the full-data
//	               θ when simulating)
//	trace.csv      one row per step of each model's test: the item asked,
//	               its answer and θ and its standard error after it (step 0:
//	               before any answer)
//	next.csv       the next questions to ask (a live test)
//	cat.json       the settings, the estimator in words and, when
//	               simulating, the summary
//
// and the item-group file content balancing reads. Missing values are empty
// CSV cells and NaN in memory.
package catfile

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/csvtable"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/limits"
)

// cols names a per-dimension column, as in the fit folder.
var cols = irtfit.Cols

// appendNums writes rank cells of v (empty when v is nil).
var appendNums = irtfit.AppendDims

func readNums(get csvtable.Row, name string, rank int, required bool) []float64 {
	v := make([]float64, rank)
	for d, c := range cols(name, rank) {
		if required {
			v[d] = get.Num(c)
		} else {
			v[d] = get.OptNum(c)
		}
	}
	return v
}

// Ability is one row of abilities.csv.
type Ability struct {
	Model     string
	Theta, SE []float64 // rank values each
	ItemsUsed int
	Stop      string // budget, target_se, exhausted; "" for a test still going (live)
	// Simulations only (nil otherwise): θ and its standard error from all the
	// model's answers, and how many those were.
	ThetaFull, SEFull []float64
	ItemsFull         int
}

// WriteAbilities writes abilities.csv: model,theta,se,items_used,stop (rank
// r: theta_1..theta_r, se_1..se_r), then theta_full,se_full,items_full when
// any row has them.
func WriteAbilities(w io.Writer, rank int, rows []Ability) error {
	full := false
	for _, a := range rows {
		full = full || a.ThetaFull != nil
	}
	cw := csv.NewWriter(w)
	hdr := append([]string{"model"}, cols("theta", rank)...)
	hdr = append(hdr, cols("se", rank)...)
	hdr = append(hdr, "items_used", "stop")
	if full {
		hdr = append(append(append(hdr, cols("theta_full", rank)...), cols("se_full", rank)...), "items_full")
	}
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, a := range rows {
		row := appendNums(appendNums([]string{a.Model}, a.Theta, rank), a.SE, rank)
		row = append(row, strconv.Itoa(a.ItemsUsed), a.Stop)
		if full {
			row = appendNums(appendNums(row, a.ThetaFull, rank), a.SEFull, rank)
			n := ""
			if a.ThetaFull != nil {
				n = strconv.Itoa(a.ItemsFull)
			}
			row = append(row, n)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadAbilities reads an abilities.csv of the given rank.
func ReadAbilities(path string, rank int) ([]Ability, error) {
	var out []Ability
	err := csvtable.Read(path, func(get csvtable.Row) error {
		a := Ability{Model: get.Str("model"), Theta: readNums(get, "theta", rank, true), SE: readNums(get, "se", rank, true),
			ItemsUsed: get.Int("items_used"), Stop: get.OptStr("stop")}
		if get.Has(cols("theta_full", rank)[0]) && get.OptStr(cols("theta_full", rank)[0]) != "" {
			a.ThetaFull, a.SEFull, a.ItemsFull = readNums(get, "theta_full", rank, true), readNums(get, "se_full", rank, true), get.Int("items_full")
		}
		out = append(out, a)
		return get.Err()
	})
	return out, err
}

// Step is one row of trace.csv: after Step answers (0: none yet), Item the
// last item asked (its group, the answer and the rule's value for it), and
// θ and its standard error.
type Step struct {
	Model     string
	Step      int
	Item      string // "" at step 0
	Group     string
	Answer    int     // 0 or 1; −1 at step 0
	Value     float64 // the rule's criterion for the item (NaN: random, or step 0)
	Theta, SE []float64
}

// WriteTrace writes trace.csv: model,step,item,group,answer,value,theta,se
// (rank r: theta_1..theta_r, se_1..se_r).
func WriteTrace(w io.Writer, rank int, steps []Step) error {
	cw := csv.NewWriter(w)
	hdr := []string{"model", "step", "item", "group", "answer", "value"}
	hdr = append(append(hdr, cols("theta", rank)...), cols("se", rank)...)
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, s := range steps {
		ans := ""
		if s.Answer >= 0 {
			ans = strconv.Itoa(s.Answer)
		}
		row := []string{s.Model, strconv.Itoa(s.Step), s.Item, s.Group, ans, model.FormatFloat(s.Value)}
		row = appendNums(appendNums(row, s.Theta, rank), s.SE, rank)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadTrace reads a trace.csv of the given rank.
func ReadTrace(path string, rank int) ([]Step, error) {
	var out []Step
	err := csvtable.Read(path, func(get csvtable.Row) error {
		s := Step{Model: get.Str("model"), Step: get.Int("step"), Item: get.OptStr("item"), Group: get.OptStr("group"),
			Answer: -1, Value: get.OptNum("value"), Theta: readNums(get, "theta", rank, true), SE: readNums(get, "se", rank, true)}
		if get.OptStr("answer") != "" {
			s.Answer = get.Int("answer")
		}
		out = append(out, s)
		return get.Err()
	})
	return out, err
}

// Question is one row of next.csv: the Rank-th question to ask Model next,
// its group, the rule's value for it and P(correct) at the model's current θ.
type Question struct {
	Model string
	Rank  int
	Item  string
	Group string
	Value float64
	P     float64
}

// WriteNext writes next.csv: model,rank,item,group,value,p_correct.
func WriteNext(w io.Writer, qs []Question) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"model", "rank", "item", "group", "value", "p_correct"}); err != nil {
		return err
	}
	for _, q := range qs {
		if err := cw.Write([]string{q.Model, strconv.Itoa(q.Rank), q.Item, q.Group, model.FormatFloat(q.Value), model.FormatFloat(q.P)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadNext reads a next.csv.
func ReadNext(path string) ([]Question, error) {
	var out []Question
	err := csvtable.Read(path, func(get csvtable.Row) error {
		out = append(out, Question{Model: get.Str("model"), Rank: get.Int("rank"), Item: get.Str("item"), Group: get.OptStr("group"),
			Value: get.OptNum("value"), P: get.OptNum("p_correct")})
		return get.Err()
	})
	return out, err
}

// Settings is the "settings" object of cat.json.
type Settings struct {
	Fit       string   `json:"fit"`
	Data      string   `json:"data,omitempty"`    // simulate: the answers replayed
	Answers   string   `json:"answers,omitempty"` // live: the answers so far
	Models    []string `json:"models,omitempty"`
	Rule      string   `json:"rule"`
	Estimator string   `json:"estimator"`
	Budget    int      `json:"budget"`
	TargetSE  float64  `json:"target_se"`
	// TargetScoreWidth: a simulated test stopped once the 95% interval of
	// its score on the whole bank was at most this wide (0: no such stop).
	TargetScoreWidth float64 `json:"target_score_width,omitempty"`
	MinItems         int     `json:"min_items,omitempty"`
	// ExcludeFlagged: items flagged in the fit's items.csv were never asked.
	ExcludeFlagged bool    `json:"exclude_flagged,omitempty"`
	Next           int     `json:"next,omitempty"`
	Groups         string  `json:"groups,omitempty"`
	GroupCol       string  `json:"group_column,omitempty"`
	Balance        bool    `json:"balance"`
	KLWidth        float64 `json:"kl_width,omitempty"`
	Seed           int64   `json:"seed"`
}

// Summary is how the simulated tests compare with the full-data θ (first
// dimension at rank > 1).
type Summary struct {
	Models   int         `json:"models"`
	Spearman model.Float `json:"spearman"`
	Pearson  model.Float `json:"pearson"`
	// CorrelationNote says why Spearman and Pearson are null (fewer than
	// two models, or a constant θ); "" when they are defined.
	CorrelationNote string      `json:"correlation_note,omitempty"`
	RMSE            model.Float `json:"rmse"`
	MeanItems       float64     `json:"mean_items"`
	MinItems        int         `json:"min_items"`
	MaxItems        int         `json:"max_items"`
	MeanSE          model.Float `json:"mean_se"`
	// FullItems is the mean number of answers behind the full-data θ.
	FullItems float64        `json:"full_items"`
	Stops     map[string]int `json:"stops"`
}

// Doc is cat.json.
type Doc struct {
	Version  string   `json:"jeirt_version"`
	Mode     string   `json:"mode"` // simulate or live
	Settings Settings `json:"settings"`
	// Theta states how θ and its standard error are estimated, and the prior.
	Theta     string    `json:"theta"`
	PriorMean []float64 `json:"prior_mean"`
	PriorCov  []float64 `json:"prior_cov"`
	Items     int       `json:"items"` // in the bank
	Summary   *Summary  `json:"summary,omitempty"`
}

// WriteDoc writes cat.json.
func WriteDoc(w io.Writer, d *Doc) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// ReadDoc reads cat.json.
func ReadDoc(path string) (*Doc, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &Doc{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Folder is what `jeirt irt cat --out DIR` writes.
type Folder struct {
	Doc       *Doc
	Rank      int
	Abilities []Ability
	Trace     []Step
	Next      []Question // live only (nil: no next.csv)
}

// Write puts the folder's files into dir (which exists), each atomically.
func Write(dir string, f *Folder) error {
	if err := fileio.WriteFileAtomic(filepath.Join(dir, "abilities.csv"), func(w io.Writer) error {
		return WriteAbilities(w, f.Rank, f.Abilities)
	}); err != nil {
		return err
	}
	if err := fileio.WriteFileAtomic(filepath.Join(dir, "trace.csv"), func(w io.Writer) error {
		return WriteTrace(w, f.Rank, f.Trace)
	}); err != nil {
		return err
	}
	if f.Next != nil {
		if err := fileio.WriteFileAtomic(filepath.Join(dir, "next.csv"), func(w io.Writer) error {
			return WriteNext(w, f.Next)
		}); err != nil {
			return err
		}
	}
	return fileio.WriteFileAtomic(filepath.Join(dir, "cat.json"), func(w io.Writer) error { return WriteDoc(w, f.Doc) })
}

// itemIDNames are the item id columns a groups file may have.
var itemIDNames = []string{"item", "item_id", "question_id", "prompt_id", "id"}

// groupNames are the group columns looked for when none is named.
var groupNames = []string{"group", "category", "benchmark"}

// ReadGroups reads an item-group CSV: an item id column (item, item_id,
// question_id, prompt_id or id) and the group column col ("": the first of
// group, category and benchmark). It returns each item's group by id; an
// item listed twice is an error.
func ReadGroups(path, col string) (map[string]string, error) {
	out := map[string]string{}
	idCol, gCol := "", col
	line := 1
	err := csvtable.Read(path, func(get csvtable.Row) error {
		line++
		if idCol == "" {
			for _, n := range itemIDNames {
				if get.Has(n) {
					idCol = n
					break
				}
			}
			if idCol == "" {
				return fmt.Errorf("%s: no item id column (want one of %s)", path, strings.Join(itemIDNames, ", "))
			}
			if gCol == "" {
				for _, n := range groupNames {
					if get.Has(n) {
						gCol = n
						break
					}
				}
				if gCol == "" {
					return model.FieldErrorf("GroupColumn", "%s: no group column (want one of %s, or name it with {GroupColumn})", path, strings.Join(groupNames, ", "))
				}
			} else if !get.Has(gCol) {
				return model.FieldErrorf("GroupColumn", "%s: no column %q ({GroupColumn})", path, gCol)
			}
		}
		id, g := get.Str(idCol), get.Str(gCol)
		if err := get.Err(); err != nil {
			return err
		}
		if id == "" {
			return fmt.Errorf("%s:%d: column %q is empty", path, line, idCol)
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("%s:%d: column %q: item %q listed twice", path, line, idCol, limits.Clip(id))
		}
		out[id] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no items", path)
	}
	return out, nil
}
