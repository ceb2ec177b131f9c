package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// MetricsFile is the name of a checkpoint's metrics file.
const MetricsFile = "metrics.json"

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

// epochJSON is Epoch as metrics.json holds it: the validation figures of a
// run without validation cells, and the training accuracy of an epoch that
// measured none, are NaN in memory and null in the file.
type epochJSON struct {
	Epoch          int         `json:"epoch"`
	TrainLoss      model.Float `json:"train_loss"`
	TrainAcc       model.Float `json:"train_acc"`
	ValLoss        model.Float `json:"val_loss"`
	ValAcc         model.Float `json:"val_acc"`
	LR             float64     `json:"lr"`
	ExamplesPerSec float64     `json:"examples_per_sec"`
	Seconds        float64     `json:"seconds"`
	Best           bool        `json:"best"`
}

// MarshalJSON writes the epoch with NaN as null.
func (e Epoch) MarshalJSON() ([]byte, error) {
	f := func(x float64) model.Float { return model.Float(x) }
	return json.Marshal(epochJSON{e.Epoch, f(e.TrainLoss), f(e.TrainAcc), f(e.ValLoss), f(e.ValAcc), e.LR, e.ExamplesPerSec, e.Seconds, e.Best})
}

// UnmarshalJSON reads null as NaN.
func (e *Epoch) UnmarshalJSON(b []byte) error {
	var j epochJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Epoch{j.Epoch, float64(j.TrainLoss), float64(j.TrainAcc), float64(j.ValLoss), float64(j.ValAcc), j.LR, j.ExamplesPerSec, j.Seconds, j.Best}
	return nil
}

// Geometry summarises what the learned embeddings say.
type Geometry struct {
	// NormErrorSpearman is Spearman's ρ between ‖q_j‖ and item j's error rate
	// over all its observed cells (the JE-IRT paper: larger norm, harder).
	// It is NaN (null) when undefined; NormErrorNote then says why.
	NormErrorSpearman model.Float `json:"norm_error_spearman"`
	NormErrorNote     string      `json:"norm_error_note,omitempty"`
	Items             int         `json:"items"`
	// ProjectionByGroup is, for each item group and model, the mean over the
	// group's items of q_j·m_i/‖q_j‖ (the model's ability on that group).
	ProjectionByGroup map[string]map[string]float64 `json:"projection_by_group,omitempty"`
}

// RunMetrics is metrics.json: how a JE-IRT training run scored.
type RunMetrics struct {
	Test      model.Scores            `json:"test"`
	Val       model.Scores            `json:"val"`
	Baselines map[string]model.Scores `json:"baselines,omitempty"`
	KNNK      int                     `json:"knn_k,omitempty"` // k chosen on validation
	// BaselineNotes says, per baseline, which test cells it could not
	// predict from what it learned (BaselineNote); a baseline that could
	// predict none of them is "n/a" there and has no entry in Baselines.
	BaselineNotes map[string]BaselineNote `json:"baseline_notes,omitempty"`
	// BaselineSettings says, per baseline, what the validation cells chose
	// (mf: its form, d and weight decay; ncf: its weight decay; irt_mirt:
	// its rank).
	BaselineSettings map[string]string `json:"baseline_settings,omitempty"`

	BestEpoch       int      `json:"best_epoch"`
	EpochsRun       int      `json:"epochs_run"`
	SecondsPerEpoch float64  `json:"seconds_per_epoch"`
	Geometry        Geometry `json:"geometry"`

	Device   string   `json:"device"`
	Step     string   `json:"step"` // graph or fused on the CPU, else the device
	Stop     string   `json:"stop"` // why training stopped
	Warnings []string `json:"warnings,omitempty"`
	Batching string   `json:"batching"`
	SplitBy  string   `json:"split_by"`
	// Scoring states how cells of several trials or graded scores were
	// scored (ScoringFractions); empty for 0/1 answers.
	Scoring     string         `json:"scoring,omitempty"`
	Cells       map[string]int `json:"cells"` // train, val, test
	Interrupted bool           `json:"interrupted,omitempty"`
	// By-model split: the held-out models (not in the trained table), each
	// onboarded from OnboardFraction of its cells and scored on the rest;
	// Test is then those cells pooled.
	HeldOutModels   []string   `json:"held_out_models,omitempty"`
	OnboardFraction float64    `json:"onboard_fraction,omitempty"`
	NewModels       []NewModel `json:"new_models,omitempty"`
	// ScoreCoverage is the share of NewModels whose score interval covers
	// their true score, ScoreMAE the mean |score − true score|.
	ScoreCoverage *float64 `json:"score_coverage,omitempty"`
	ScoreMAE      *float64 `json:"score_mae,omitempty"`
	// By-benchmark split: the held-out benchmarks (Test is their cells) and
	// the directional-alignment diagnostic.
	HeldOutBenchmarks []string   `json:"held_out_benchmarks,omitempty"`
	Alignment         *Alignment `json:"alignment,omitempty"`
	History           []Epoch    `json:"history"`
}

// BaselineNote is what a baseline could not predict of the test cells: the
// cells of questions (models) without a training cell, when it learns a
// parameter per question (model). Those cells are predicted by a named
// fallback: the model's training accuracy (model_mean) for a new question,
// the question's (item_mean) for a new model, the training rate (majority)
// for both.
type BaselineNote struct {
	// NA is set when the baseline could predict none of the test cells:
	// "unseen questions", "unseen models" or "unseen questions and models".
	// The baseline then has no scores: its fallback's row is its number.
	NA string `json:"na,omitempty"`
	// NewQuestionCells and NewModelCells count the test cells of questions
	// and of models it has no parameters for (a cell of both counts in
	// both), predicted by the fallback.
	NewQuestionCells int `json:"new_question_cells,omitempty"`
	NewModelCells    int `json:"new_model_cells,omitempty"`
}

// NewModel is one held-out model of a by-model split: onboarded from a
// fraction of its cells and scored on the rest.
type NewModel struct {
	Name        string        `json:"name"`
	FitCells    int           `json:"fit_cells"`
	ScoredCells int           `json:"scored_cells"`
	Onboarded   model.Scores  `json:"onboarded"`
	ModelMean   model.Scores  `json:"model_mean"`
	Joint       *model.Scores `json:"joint,omitempty"` // the same model's row of a joint fit (split.joint)
	// Score is add-model's estimate of its score on the items of its cells
	// from its fitted cells, with its 95% interval; TrueScore its mean over
	// all its cells.
	Score     *ScoreEstimate `json:"score,omitempty"`
	TrueScore float64        `json:"true_score"`
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
	raw, err := fileio.ReadInputFile(p, fileio.MaxDocumentBytes, "metrics.json")
	if err != nil {
		return nil, err
	}
	return ParseRunMetrics(p, raw)
}

// ParseRunMetrics reads the content of a metrics.json; name is where it came
// from, for errors.
func ParseRunMetrics(name string, raw []byte) (*RunMetrics, error) {
	m := RunMetrics{Test: model.NoScores(), Val: model.NoScores()}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%s: %w", name, errors.New("empty"))
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

// Alignment is the directional-alignment diagnostic of a leave-benchmark-out
// run (JE-IRT, Sec. 5): how far the held-out benchmark's questions point
// where the training benchmarks' do. JE-IRT's P = sigmoid(q·m/|q| − |q|)
// reads a question's direction q/|q| as what it tests, so a held-out
// benchmark whose mean direction is far from the training directions asks
// for abilities the model table has not been shown.
type Alignment struct {
	HeldOut []string `json:"held_out"`
	// Cosine between the held-out items' mean unit direction and the
	// training items' mean unit direction.
	Cosine float64 `json:"cosine"`
	// PerBenchmark: the cosine with each training benchmark's mean direction.
	PerBenchmark map[string]float64 `json:"per_benchmark"`
	// Nearest is the training benchmark with the largest cosine.
	Nearest string `json:"nearest"`
	// PerModel: for each model, the cosine between the mean direction of
	// the held-out questions it answered and of the training questions it
	// answered (the same for every model when every model answered every
	// question); AccuracySpearman: Spearman's ρ across models between that
	// cosine and the model's held-out accuracy (null when the cosines do not
	// vary). Set by AddPerModel.
	PerModel         map[string]float64 `json:"per_model,omitempty"`
	AccuracySpearman model.Float        `json:"accuracy_spearman,omitempty"`
}

// ScoringFractions is RunMetrics.Scoring for cells of several trials or
// graded scores.
const ScoringFractions = "cells of several trials or graded scores: log loss, Brier and ECE on the fractions k/n, weighted by trials; accuracy and AUC of the rounded outcome (correct when k/n >= 1/2, predicted correct when p >= 1/2)"
