package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
)

// MetricsFile is the name of a checkpoint's metrics file.
const MetricsFile = "metrics.json"

// NoScores are Scores where none are known: NaN, and N −1.
func NoScores() Scores {
	nan := model.Float(math.NaN())
	return Scores{Accuracy: nan, AUC: nan, Brier: nan, ECE: nan, LogLoss: nan, N: -1}
}

// Scores are the scores of probabilistic predictions of binary labels as
// jeirt's JSON files carry them (metrics.json, onboard.json, jeirt eval
// --json); an undefined score (the AUC of one class) is NaN, null in JSON.
type Scores struct {
	Accuracy model.Float `json:"accuracy"` // fraction with (p ≥ 0.5) == label
	AUC      model.Float `json:"auc"`      // area under the ROC curve, ties counted half
	Brier    model.Float `json:"brier"`    // mean (p − label)²
	ECE      model.Float `json:"ece"`      // expected calibration error over 10 equal-width bins
	LogLoss  model.Float `json:"log_loss"` // mean −log p(label)
	N        int         `json:"n"`
}

// Epoch is one epoch of JE-IRT training in metrics.json's history.
type Epoch struct {
	Epoch          int     `json:"epoch"`
	TrainLoss      float64 `json:"train_loss"` // mean batch loss during the epoch (with dropout)
	TrainAcc       float64 `json:"train_acc"`  // on up to 50,000 training cells after the epoch, no dropout
	ValLoss        float64 `json:"val_loss"`
	ValAcc         float64 `json:"val_acc"`
	LR             float64 `json:"lr"`
	ExamplesPerSec float64 `json:"examples_per_sec"`
	Seconds        float64 `json:"seconds"` // training time of the epoch, evaluation excluded
	Best           bool    `json:"best"`    // the best validation loss so far
}

// Geometry summarises what the learned embeddings say.
type Geometry struct {
	// NormErrorSpearman is Spearman's ρ between ‖q_j‖ and item j's error rate
	// over all its observed cells (the JE-IRT paper: larger norm, harder).
	NormErrorSpearman float64 `json:"norm_error_spearman"`
	Items             int     `json:"items"`
	// ProjectionByGroup is, for each item group and model, the mean over the
	// group's items of q_j·m_i/‖q_j‖ (the model's ability on that group).
	ProjectionByGroup map[string]map[string]float64 `json:"projection_by_group,omitempty"`
}

// RunMetrics is metrics.json: how a JE-IRT training run scored.
type RunMetrics struct {
	Test      Scores            `json:"test"`
	Val       Scores            `json:"val"`
	Baselines map[string]Scores `json:"baselines,omitempty"`
	KNNK      int               `json:"knn_k,omitempty"` // k chosen on validation

	BestEpoch       int      `json:"best_epoch"`
	EpochsRun       int      `json:"epochs_run"`
	SecondsPerEpoch float64  `json:"seconds_per_epoch"`
	Geometry        Geometry `json:"geometry"`

	Device      string         `json:"device"`
	Step        string         `json:"step"` // graph or fused on the CPU, else the device
	Stop        string         `json:"stop"` // why training stopped
	Warnings    []string       `json:"warnings,omitempty"`
	Batching    string         `json:"batching"`
	SplitBy     string         `json:"split_by"`
	Cells       map[string]int `json:"cells"` // train, val, test
	Interrupted bool           `json:"interrupted,omitempty"`
	// By-model split: the held-out models (not in the trained table), each
	// onboarded from OnboardFraction of its cells and scored on the rest;
	// Test is then those cells pooled.
	HeldOutModels   []string   `json:"held_out_models,omitempty"`
	OnboardFraction float64    `json:"onboard_fraction,omitempty"`
	NewModels       []NewModel `json:"new_models,omitempty"`
	// By-benchmark split: the held-out benchmarks (Test is their cells) and
	// the directional-alignment diagnostic.
	HeldOutBenchmarks []string   `json:"held_out_benchmarks,omitempty"`
	Alignment         *Alignment `json:"alignment,omitempty"`
	History           []Epoch    `json:"history"`
}

// NewModel is one held-out model of a by-model split: onboarded from a
// fraction of its cells and scored on the rest.
type NewModel struct {
	Name        string  `json:"name"`
	FitCells    int     `json:"fit_cells"`
	ScoredCells int     `json:"scored_cells"`
	Onboarded   Scores  `json:"onboarded"`
	ModelMean   Scores  `json:"model_mean"`
	Joint       *Scores `json:"joint,omitempty"` // the same model's row of a joint fit (split.joint)
}

// Marshal is the content of metrics.json: indented JSON and a final newline.
func (m *RunMetrics) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadRunMetrics reads dir/metrics.json. A folder without one is an error
// that errors.Is(err, os.ErrNotExist) recognises.
func ReadRunMetrics(dir string) (*RunMetrics, error) {
	p := filepath.Join(dir, MetricsFile)
	raw, err := model.ReadInputFile(p, model.MaxDocumentBytes, "metrics.json")
	if err != nil {
		return nil, err
	}
	return ParseRunMetrics(p, raw)
}

// ParseRunMetrics reads the content of a metrics.json; name is where it came
// from, for errors.
func ParseRunMetrics(name string, raw []byte) (*RunMetrics, error) {
	m := RunMetrics{Test: NoScores(), Val: NoScores()}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: %w", name, errors.New("empty"))
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}
