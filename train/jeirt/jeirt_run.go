package jeirt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

// RunOptions are the settings of RunJEIRT that are not part of the config.
type RunOptions struct {
	Log         io.Writer // progress lines and warnings; nil discards them
	Version     string    // the jeirt release, written into the manifest
	Replace     bool      // replace an existing output folder
	NoBaselines bool      // skip the baseline table (faster, for sweeps)
}

// RunResult is what RunJEIRT trained and measured.
type RunResult struct {
	Fit        *JEIRTFit
	Metrics    *RunMetrics
	Checkpoint *model.Checkpoint
}

// RunMetrics is metrics.json (see package model).
type RunMetrics = eval.RunMetrics

// Geometry summarises what the learned embeddings say.
type Geometry = eval.Geometry

func (c *Config) jeirt() JEIRT {
	device, step := c.Train.Device, c.Train.Step
	if device == "gorgonia" { // the old spelling of the CPU's graph step
		device, step = backend.CPU, StepGraph
	}
	// The config says every value; JEIRT's zero values are defaults, so a
	// configured 0 (none) is passed as negative.
	none := func(v float64) float64 {
		if v == 0 {
			return -1
		}
		return v
	}
	patience := c.Train.Patience
	if patience == 0 {
		patience = -1
	}
	return JEIRT{Dim: c.Model.Dim, Hidden: c.Model.Hidden, Dropout: none(c.Model.Dropout), Residual: c.Model.Residual,
		Epochs: c.Train.Epochs, BatchSize: c.Train.BatchSize, LR: c.Train.LR, WeightDecay: none(c.Train.WeightDecay),
		Gamma: c.Train.Gamma, Patience: patience, Seed: c.Train.Seed, Device: device, Step: step, Batching: c.Train.Batching}
}

// RunJEIRT does what `jeirt train` does: read and split the data, encode the
// question texts, train JE-IRT, score it and the baselines on the same test
// cells, and write the checkpoint folder cfg.Output (model.safetensors,
// manifest.json, metrics.json) atomically. When ctx is cancelled after at
// least one epoch, the best epoch so far is evaluated and written, without
// the baselines.
func RunJEIRT(ctx context.Context, cfg *Config, opt RunOptions) (*RunResult, error) {
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	if _, err := os.Stat(cfg.Output); err == nil && !opt.Replace {
		return nil, fmt.Errorf("output %s already exists (remove it, choose another with --set output=DIR, or pass --force)", cfg.Output)
	}
	trainR, valR, testR, all, err := LoadSplits(cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "data: %d models x %d items, %d cells; split by %s: %d train, %d val, %d test\n",
		all.NumModels(), all.NumItems(), all.Len(), splitName(cfg), trainR.Len(), valR.Len(), testR.Len())

	enc, err := encoder.Open(cfg.Encoder.Spec)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if f, ok := enc.(encoder.Fitter); ok {
		// Fitted on the training questions only: val and test text stays unseen.
		if err := f.Fit(ctx, trainR.ObservedItemTexts()); err != nil {
			return nil, err
		}
	}
	features, err := EncodeItemsCached(ctx, enc, all, cfg.Encoder.Cache, log)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "encoder: %s (%s), %d items x %d in %.1fs\n", cfg.Encoder.Spec, enc.Fingerprint(), all.NumItems(), enc.Dim(), time.Since(start).Seconds())

	tr := cfg.jeirt()
	tr.Progress = func(e JEIRTEpoch) {
		best := ""
		if e.Best {
			best = "  *"
		}
		fmt.Fprintf(log, "epoch %3d/%d  train loss %.4f acc %.4f  val loss %.4f acc %.4f  lr %.3g  %.0f ex/s%s\n",
			e.Epoch, tr.Epochs, e.TrainLoss, e.TrainAcc, e.ValLoss, e.ValAcc, e.LR, e.ExamplesPerSec, best)
	}
	fit, err := tr.Fit(ctx, trainR, valR, features, enc.Dim())
	if err != nil {
		return nil, err
	}
	if fit.Interrupted {
		fmt.Fprintf(log, "interrupted: keeping epoch %d (best validation loss); baselines skipped\n", fit.BestEpoch)
	}

	met := &RunMetrics{BestEpoch: fit.BestEpoch, EpochsRun: fit.EpochsRun, SecondsPerEpoch: fit.SecondsPerEpoch,
		Device: fit.Device, Batching: tr.Batching, SplitBy: splitName(cfg), Interrupted: fit.Interrupted, History: fit.History,
		Cells: map[string]int{"train": trainR.Len(), "val": valR.Len(), "test": testR.Len()}}
	met.Test = eval.Score(PredictJEIRT(fit.Model, testR), testR.Label).Scores()
	met.Val = eval.Score(PredictJEIRT(fit.Model, valR), valR.Label).Scores()
	met.Geometry = JEIRTGeometry(fit.Model, all)
	if !fit.Interrupted && !opt.NoBaselines {
		// Baselines run to completion even if Ctrl-C comes now: the model is trained.
		met.Baselines, met.KNNK, err = RunBaselines(context.WithoutCancel(ctx), trainR, valR, testR, features, enc.Dim(), log)
		if err != nil {
			return nil, err
		}
	}
	PrintScoreTable(log, met)

	cfgJSON, _ := json.Marshal(cfg)
	metJSON, err := met.Marshal()
	if err != nil {
		return nil, err
	}
	encInfo, err := encoder.Record(cfg.Encoder.Spec, enc)
	if err != nil {
		return nil, err
	}
	ck := &model.Checkpoint{Model: fit.Model, Files: map[string][]byte{eval.MetricsFile: metJSON},
		Manifest: model.Manifest{JEIRTVersion: opt.Version, Created: time.Now().UTC().Format(time.RFC3339),
			Encoder: encInfo,
			Model:   model.ModelInfo{Dropout: cfg.Model.Dropout, Residual: cfg.Model.Residual},
			Config:  cfgJSON, Metrics: metJSON[:len(metJSON)-1]}}
	if err := ck.Write(cfg.Output, opt.Replace); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "wrote %s (model.safetensors, manifest.json, metrics.json)\n", cfg.Output)
	return &RunResult{Fit: fit, Metrics: met, Checkpoint: ck}, nil
}

func splitName(cfg *Config) string {
	if cfg.Data.Responses == "" {
		return "given"
	}
	return cfg.Split.By
}

// LoadSplits reads the data a config names and returns its train, validation
// and test cells plus all cells, sharing one list of models and items.
func LoadSplits(cfg *Config) (trainR, valR, testR, all *model.Responses, err error) {
	ro := model.ReadOptions{Format: cfg.Data.Format, Items: cfg.Data.Items}
	if cfg.Data.Responses != "" {
		all, _, err = model.ReadFile(cfg.Data.Responses, ro)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		trainR, valR, testR, err = eval.Split(all, eval.SplitOptions{Val: cfg.Split.Val, Test: cfg.Split.Test, Seed: cfg.Split.Seed, By: cfg.Split.By})
		return trainR, valR, testR, all, err
	}
	var parts []*model.Responses
	for _, p := range []string{cfg.Data.Train, cfg.Data.Val, cfg.Data.Test} {
		r, _, err := model.ReadFile(p, ro)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		parts = append(parts, r)
	}
	merged, all := MergeResponses(parts...)
	return merged[0], merged[1], merged[2], all, nil
}

// MergeResponses puts responses read from separate files into one index
// space: the union of their models and items, in order of first appearance.
// It returns each part re-indexed and all cells together.
func MergeResponses(parts ...*model.Responses) ([]*model.Responses, *model.Responses) {
	all := &model.Responses{}
	mIdx, iIdx := map[string]int32{}, map[string]int32{}
	var text, group []string
	haveText, haveGroup := false, false
	for _, p := range parts {
		for _, name := range p.Models {
			if _, ok := mIdx[name]; !ok {
				mIdx[name] = int32(len(all.Models))
				all.Models = append(all.Models, name)
			}
		}
		for j, id := range p.Items {
			k, ok := iIdx[id]
			if !ok {
				k = int32(len(all.Items))
				iIdx[id] = k
				all.Items = append(all.Items, id)
				text, group = append(text, ""), append(group, "")
			}
			if p.ItemText != nil && text[k] == "" {
				text[k], haveText = p.ItemText[j], true
			}
			if p.ItemGroup != nil && group[k] == "" {
				group[k], haveGroup = p.ItemGroup[j], true
			}
		}
	}
	if haveText {
		all.ItemText = text
	}
	if haveGroup {
		all.ItemGroup = group
	}
	out := make([]*model.Responses, len(parts))
	for k, p := range parts {
		r := &model.Responses{Models: all.Models, Items: all.Items, ItemText: all.ItemText, ItemGroup: all.ItemGroup,
			Model: make([]int32, p.Len()), Item: make([]int32, p.Len()), Label: append([]uint8(nil), p.Label...)}
		for c := range p.Label {
			r.Model[c] = mIdx[p.Models[p.Model[c]]]
			r.Item[c] = iIdx[p.Items[p.Item[c]]]
		}
		out[k] = r
		all.Model = append(all.Model, r.Model...)
		all.Item = append(all.Item, r.Item...)
		all.Label = append(all.Label, r.Label...)
	}
	return out, all
}

// EncodeItems returns the encoder vector of every item of r, row-major
// (NumItems x enc.Dim()). An encoder keyed by item id (precomputed vectors)
// is asked by id; otherwise items are encoded by text, and items without text
// by their id (with a warning on log).
func EncodeItems(ctx context.Context, enc encoder.Encoder, r *model.Responses, log io.Writer) ([]float32, error) {
	return EncodeItemsCached(ctx, enc, r, "", log)
}

// EncodeItemsCached is EncodeItems reading and filling the embedding cache in
// folder cache (encoder.Cache; none when cache is "").
func EncodeItemsCached(ctx context.Context, enc encoder.Encoder, r *model.Responses, cache string, log io.Writer) ([]float32, error) {
	texts := make([]string, r.NumItems())
	if _, byID := enc.(encoder.ItemEncoder); !byID {
		missing := 0
		for j := range texts {
			if r.ItemText != nil && r.ItemText[j] != "" {
				texts[j] = r.ItemText[j]
			} else {
				texts[j] = r.Items[j]
				missing++
			}
		}
		if missing > 0 && log != nil {
			fmt.Fprintf(log, "warning: %d of %d items have no text; their ids are encoded instead (give data.items for real question text)\n", missing, len(texts))
		}
	}
	opt := encoder.ItemOptions{}
	if cache != "" {
		opt.Cache = &encoder.Cache{Dir: cache}
	}
	vecs, err := encoder.EncodeItems(ctx, enc, r.Items, texts, opt)
	if err != nil {
		return nil, err
	}
	D := enc.Dim()
	out := make([]float32, 0, len(vecs)*D)
	for j, v := range vecs {
		if len(v) != D {
			return nil, fmt.Errorf("encoder %s: item %s has a vector of length %d, want %d", enc.Fingerprint(), r.Items[j], len(v), D)
		}
		out = append(out, v...)
	}
	return out, nil
}

// PredictJEIRT returns P(correct) for every cell of r, whose Models and Items
// must be those of the model (as after training).
func PredictJEIRT(m *model.JEIRT, r *model.Responses) []float64 {
	p := make([]float64, r.Len())
	for c := range p {
		p[c] = m.Prob(int(r.Model[c]), m.ItemEmbedding(int(r.Item[c])))
	}
	return p
}

// JEIRTGeometry computes Geometry over all cells of r (indexed as m).
func JEIRTGeometry(m *model.JEIRT, r *model.Responses) Geometry {
	acc := r.ItemAccuracy()
	var norms, errRate []float64
	for j, a := range acc {
		if math.IsNaN(a) {
			continue
		}
		norms = append(norms, model.Norm(m.ItemEmbedding(j)))
		errRate = append(errRate, 1-a)
	}
	g := Geometry{NormErrorSpearman: eval.Spearman(norms, errRate), Items: len(norms)}
	if r.ItemGroup != nil {
		byGroup := map[string][]int{}
		for j, grp := range r.ItemGroup {
			if grp != "" {
				byGroup[grp] = append(byGroup[grp], j)
			}
		}
		if len(byGroup) > 0 {
			g.ProjectionByGroup = map[string]map[string]float64{}
			for grp, items := range byGroup {
				row := map[string]float64{}
				for i, name := range m.Models {
					var s float64
					for _, j := range items {
						s += m.Projection(i, m.ItemEmbedding(j))
					}
					row[name] = s / float64(len(items))
				}
				g.ProjectionByGroup[grp] = row
			}
		}
	}
	if math.IsNaN(g.NormErrorSpearman) {
		g.NormErrorSpearman = 0
	}
	return g
}

// RunBaselines scores the baselines on testR: majority, model_mean, item_mean,
// knn (k chosen on valR) and irt_2pl (cBMM).
func RunBaselines(ctx context.Context, trainR, valR, testR *model.Responses, features []float32, dim int, log io.Writer) (map[string]eval.Scores, int, error) {
	out := map[string]eval.Scores{
		"majority":   eval.Score(eval.MajorityPredict(trainR, testR), testR.Label).Scores(),
		"model_mean": eval.Score(eval.ModelMeanPredict(trainR, testR), testR.Label).Scores(),
		"item_mean":  eval.Score(eval.ItemMeanPredict(trainR, testR), testR.Label).Scores(),
	}
	start := time.Now()
	pk, k, err := eval.KNN{Features: features, Dim: dim}.Fit(ctx, trainR, valR, testR)
	if err != nil {
		return nil, 0, err
	}
	out["knn"] = eval.Score(pk, testR.Label).Scores()
	fmt.Fprintf(log, "baseline knn: k = %d (chosen on validation), %.1fs\n", k, time.Since(start).Seconds())
	start = time.Now()
	irt, err := irt.CBMM{}.Fit(ctx, trainR)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, 0, err
		}
		fmt.Fprintf(log, "warning: 2PL baseline failed: %v\n", err)
		return out, k, nil
	}
	out["irt_2pl"] = eval.Score(eval.IRTPredict(irt, trainR, testR), testR.Label).Scores()
	fmt.Fprintf(log, "baseline irt_2pl: cBMM %d iterations, %.1fs\n", irt.Iterations, time.Since(start).Seconds())
	return out, k, nil
}

// PrintScoreTable writes the test-cell table: JE-IRT then the baselines.
func PrintScoreTable(w io.Writer, m *RunMetrics) {
	fmt.Fprintf(w, "\ntest cells: %d (split by %s)\n", m.Test.N, m.SplitBy)
	fmt.Fprintf(w, "%-12s %8s %8s %8s %8s %8s\n", "method", "accuracy", "AUC", "logloss", "Brier", "ECE")
	row := func(name string, s eval.Scores) {
		fmt.Fprintf(w, "%-12s %8.4f %8.4f %8.4f %8.4f %8.4f\n", name, s.Accuracy, s.AUC, s.LogLoss, s.Brier, s.ECE)
	}
	row("jeirt", m.Test)
	names := make([]string, 0, len(m.Baselines))
	for n := range m.Baselines {
		names = append(names, n)
	}
	order := map[string]int{"majority": 0, "model_mean": 1, "item_mean": 2, "knn": 3, "irt_2pl": 4}
	sort.Slice(names, func(a, b int) bool { return order[names[a]] < order[names[b]] })
	for _, n := range names {
		label := n
		if n == "knn" {
			label = fmt.Sprintf("knn (k=%d)", m.KNNK)
		}
		row(label, m.Baselines[n])
	}
	fmt.Fprintf(w, "geometry: Spearman(|q|, item error rate) = %.3f over %d items\n", m.Geometry.NormErrorSpearman, m.Geometry.Items)
}
