package datarun

import (
	"math"
	"sort"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/read/harness"
	"github.com/jeirt/jeirt/model/read/mdb"
)

// Summary describes a responses file as `jeirt data inspect` prints it
// (and writes it with --json): size, density, accuracies and what reading it met.
type Summary struct {
	File        string  `json:"file"`
	Format      string  `json:"format"`
	Decided     string  `json:"decided"`
	Gzip        bool    `json:"gzip"`
	Models      int     `json:"models"`
	Items       int     `json:"items"`
	Observed    int     `json:"observed"`
	Density     float64 `json:"density"`
	MeanCorrect float64 `json:"mean_correct"`

	ModelAccMin    float64 `json:"model_accuracy_min"`
	ModelAccMinBy  string  `json:"model_accuracy_min_model"`
	ModelAccMedian float64 `json:"model_accuracy_median"`
	ModelAccMax    float64 `json:"model_accuracy_max"`
	ModelAccMaxBy  string  `json:"model_accuracy_max_model"`
	ModelsNoCells  int     `json:"models_without_cells"`

	ItemsNobody   int `json:"items_nobody_solved"`
	ItemsEveryone int `json:"items_everybody_solved"`
	ItemsNoCells  int `json:"items_without_cells"`
	ItemsWithText int `json:"items_with_text"`
	// ItemsFile and ItemTextColumn are the item-text file and its column
	// read as the text.
	ItemsFile      string `json:"items_file,omitempty"`
	ItemTextColumn string `json:"item_text_column,omitempty"`
	Groups         int    `json:"groups"`

	// Trials per observed cell (all 1 for 0/1 answers) and the cells whose
	// successes are a fraction (graded scores).
	Trials      int64   `json:"trials"`
	TrialsMean  float64 `json:"trials_per_cell_mean"`
	TrialsMin   int     `json:"trials_per_cell_min"`
	TrialsMax   int     `json:"trials_per_cell_max"`
	GradedCells int     `json:"graded_cells"`
	GradedShare float64 `json:"graded_share"`
	ScoreLevels int     `json:"score_levels,omitempty"` // distinct scores k/n of graded data (0 when not graded)

	Blank          int `json:"blank_cells"`
	DuplicateCells int `json:"duplicate_cells"`
	DuplicateRows  int `json:"duplicate_rows"`
	Conflicts      int `json:"duplicate_conflicts"`
	TiesDropped    int `json:"ties_left_missing"`

	Warning string `json:"warning,omitempty"`

	// Logs is what was read of evaluation-tool logs: tools, tasks, metrics, skips.
	Logs *harness.Summary `json:"logs,omitempty"`
	// MDB is what a measurement-db tree held: its benchmarks (read or not,
	// each with how its responses were scored), test conditions and names.
	MDB *mdb.Summary `json:"measurement_db,omitempty"`
}

// Summarize describes r, read as rep says.
func Summarize(r *model.Responses, rep *read.Report) Summary {
	s := Summary{File: rep.Path, Format: rep.Format, Decided: rep.Why, Gzip: rep.Gzip,
		Models: r.NumModels(), Items: r.NumItems(), Observed: r.Len(), Density: r.Density(), MeanCorrect: r.MeanCorrect(),
		Blank: rep.Blank, DuplicateCells: rep.DuplicateCells, DuplicateRows: rep.DuplicateRows,
		Conflicts: rep.Conflicts, TiesDropped: rep.TiesDropped, ItemsFile: rep.ItemsPath, ItemTextColumn: rep.ItemTextColumn, Warning: rep.Warning, Logs: rep.Logs, MDB: rep.MDB}
	s.Trials, s.GradedCells = r.TotalTrials(), r.GradedCells()
	if n := r.Len(); n > 0 {
		s.TrialsMean, s.GradedShare = float64(s.Trials)/float64(n), float64(s.GradedCells)/float64(n)
		s.TrialsMin, s.TrialsMax = 1, 1
		for k, t := range r.Trials {
			if k == 0 || int(t) < s.TrialsMin {
				s.TrialsMin = int(t)
			}
			if k == 0 || int(t) > s.TrialsMax {
				s.TrialsMax = int(t)
			}
		}
	}
	if s.GradedCells > 0 {
		levels := map[float64]bool{}
		for c := 0; c < r.Len() && len(levels) <= 1000; c++ {
			levels[r.ScoreAt(c)] = true
		}
		s.ScoreLevels = len(levels)
	}
	var acc []float64
	s.ModelAccMin, s.ModelAccMax = math.NaN(), math.NaN()
	for i, a := range r.ModelAccuracy() {
		if math.IsNaN(a) {
			s.ModelsNoCells++
			continue
		}
		acc = append(acc, a)
		if len(acc) == 1 || a < s.ModelAccMin {
			s.ModelAccMin, s.ModelAccMinBy = a, r.Models[i]
		}
		if len(acc) == 1 || a > s.ModelAccMax {
			s.ModelAccMax, s.ModelAccMaxBy = a, r.Models[i]
		}
	}
	sort.Float64s(acc)
	s.ModelAccMedian = math.NaN()
	if n := len(acc); n > 0 {
		s.ModelAccMedian = (acc[(n-1)/2] + acc[n/2]) / 2
	}
	for _, a := range r.ItemAccuracy() {
		switch {
		case math.IsNaN(a):
			s.ItemsNoCells++
		case a == 0:
			s.ItemsNobody++
		case a == 1:
			s.ItemsEveryone++
		}
	}
	for _, t := range r.ItemText {
		if t != "" {
			s.ItemsWithText++
		}
	}
	groups := map[string]bool{}
	for _, g := range r.ItemGroup {
		if g != "" {
			groups[g] = true
		}
	}
	s.Groups = len(groups)
	return s
}
