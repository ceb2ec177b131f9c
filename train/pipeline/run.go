package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/onboard"
)

// Options are the settings of Run that are not part of the config.
type Options struct {
	Log progress.Logf // progress lines and warnings; nil is silent
	// Results, when set, is called once the run is measured, before the
	// checkpoint is written, with the reason training stopped and the
	// metrics (jeirt train prints them with PrintScoreTable).
	Results     func(stop string, m *checkpoint.RunMetrics)
	Version     string // the jeirt release, written into the manifest
	Replace     bool   // replace an existing output folder
	NoBaselines bool   // skip the baseline table (faster, for sweeps)
	// MaxMemory is the memory, in bytes, training may ask for at once
	// (Trainer.CheckMemory), and so may the kNN baseline (eval.KNN); 0
	// means the machine's available memory.
	MaxMemory int64
	// Device is the run's device as the command resolved it from the
	// config's train.device (backend.Resolve); "" resolves it here. The
	// config keeps the request as it was given.
	Device string
}

// Result is what Run trained and measured.
type Result struct {
	Fit        *jeirt.Result
	Metrics    *checkpoint.RunMetrics
	Checkpoint *checkpoint.Checkpoint
}

// Trainer is the config's JE-IRT training on device (a resolved device).
func (c *Config) Trainer(device string) jeirt.Trainer {
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
	return jeirt.Trainer{Dim: c.Model.Dim, Hidden: c.Model.Hidden, Dropout: none(c.Model.Dropout), Residual: c.Model.Residual,
		Epochs: c.Train.Epochs, BatchSize: c.Train.BatchSize, LR: c.Train.LR, WeightDecay: none(c.Train.WeightDecay),
		Gamma: c.Train.Gamma, Patience: patience, Seed: c.Train.Seed, Device: device, Batching: c.Train.Batching}
}

// Run does what `jeirt train` does: read and split the data, encode the
// question texts, train JE-IRT, score it and the baselines on the same test
// cells, and write the checkpoint folder cfg.Output (model.safetensors,
// manifest.json, metrics.json) atomically. When ctx is cancelled after at
// least one epoch, the best epoch so far is evaluated and written, without
// the baselines.
//
// With split.by model, the held-out models are left out of the trained model
// table: each is onboarded (onboard.HeldOut) from split.onboard_fraction of its
// cells and scored on the rest, next to its per-model mean, as the JE-IRT
// paper's new-model experiment. Early stopping then uses split.val of the
// training models' cells.
func Run(ctx context.Context, cfg *Config, opt Options) (*Result, error) {
	log := opt.Log
	// The output rule, before any work: an existing output needs Replace
	// and must be a folder jeirt wrote; the output may not be or hold an
	// input (a config's "output: ." would be its own folder).
	if _, err := fileio.CheckOutput(fileio.Output{Path: cfg.Output, Folder: true, Force: opt.Replace, Inputs: cfg.Inputs()}); err != nil {
		return nil, fmt.Errorf("output: %w %w", err, model.FieldErrorf("Set", "(set it with output: in the config or {Set} output=DIR)"))
	}
	// Claimed before training, so a second run on the same output fails now.
	release, err := fileio.LockOutput(cfg.Output)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := cfg.CheckInputs(); err != nil {
		return nil, err
	}
	device := opt.Device
	if device == "" {
		if device, err = backend.Resolve(cfg.Train.Device); err != nil {
			return nil, err
		}
	}
	trainR, valR, testR, all, err := LoadSplits(cfg, log)
	if err != nil {
		return nil, err
	}
	byModel := splitName(cfg) == "model"
	log.Printf("data: %d models x %d items, %d cells; split by %s: %d train, %d val, %d test",
		all.NumModels(), all.NumItems(), all.Len(), splitName(cfg), trainR.Len(), valR.Len(), testR.Len())
	var heldOut []string
	trainAll := trainR // by model: with the full model list, as testR
	if byModel {
		// The trained table holds the training models only.
		heldOut = modelsWithCells(testR)
		trainR, valR = keepModelsWithCells(trainR, valR)
		log.Printf("held-out models (%d, not in the trained table): %s", len(heldOut), strings.Join(heldOut, ", "))
	}

	enc, err := encoder.Open(cfg.Encoder.Spec)
	if err != nil {
		return nil, err
	}
	// The frozen encoder's forward runs on the training device when it has
	// one for this encoder (a model folder on cuda): same vectors and
	// fingerprint, so the cache is shared with CPU runs.
	if device != backend.CPU && device != backend.CPUFused {
		on, err := backend.EncoderOn(device, enc)
		if err != nil {
			return nil, err
		}
		enc = on.(encoder.Encoder)
	}
	// The encoder vectors and the parameter tables, estimated before
	// either is made.
	tr := cfg.Trainer(device)
	tr.MaxMemory = opt.MaxMemory
	if err := tr.CheckMemory(enc.Dim(), trainR.NumModels(), all.NumItems(), 4*int64(all.NumItems())*int64(enc.Dim())); err != nil {
		return nil, err
	}
	start := time.Now()
	features, err := Encode(ctx, enc, all, trainR, cfg.Encoder.Cache, log)
	var short [][]float32 // for the out-of-domain check's calibration
	if err == nil {
		short, err = EncodeShort(ctx, enc, all)
	}
	if c, ok := enc.(interface{ Close() error }); ok {
		// A GPU encoder's weights leave the device before training starts.
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	log.Printf("encoder: %s (%s), %d items x %d in %.1fs", cfg.Encoder.Spec, enc.Fingerprint(), all.NumItems(), enc.Dim(), time.Since(start).Seconds())

	tr.Progress = func(e checkpoint.Epoch) {
		best := ""
		if e.Best {
			best = "  *"
		}
		f := func(x float64) model.Float { return model.Float(x) }
		log.Printf("epoch %3d/%d  train loss %.4f acc %.4f  val loss %.4f acc %.4f  lr %.3g  %.0f ex/s%s",
			e.Epoch, tr.Epochs, f(e.TrainLoss), f(e.TrainAcc), f(e.ValLoss), f(e.ValAcc), e.LR, e.ExamplesPerSec, best)
	}
	if valR.Len() == 0 {
		log.Printf("warning: no validation cells: the validation loss and accuracy are n/a, every epoch counts as the best and the last one is kept (raise split.val for early stopping)")
	}
	tr.Warn = func(w string) { log.Printf("warning: %s", w) }
	trained, err := TrainSplit(ctx, cfg, tr, trainR, valR, features, short, enc.Dim(), log)
	if err != nil {
		return nil, err
	}
	fit := trained.Fit

	met := &checkpoint.RunMetrics{BestEpoch: fit.BestEpoch, EpochsRun: fit.EpochsRun, SecondsPerEpoch: fit.SecondsPerEpoch,
		Device: fit.Device, Step: fit.Step, Stop: fit.Stop, Warnings: fit.Warnings, Batching: tr.Batching, SplitBy: splitName(cfg),
		Interrupted: fit.Interrupted, History: fit.History, HeldOutModels: heldOut,
		Cells: map[string]int{"train": trainR.Len(), "val": valR.Len(), "test": testR.Len()}}
	met.Val = eval.ScoreResponses(jeirt.PredictJEIRT(fit.Model, valR), valR).Scores()
	if all.Weighted() {
		met.Scoring = checkpoint.ScoringFractions
	}
	met.Geometry = jeirt.JEIRTGeometry(fit.Model, all)
	cfgJSON, _ := json.Marshal(cfg)
	encInfo, err := encoder.Record(cfg.Encoder.Spec, enc)
	if err != nil {
		return nil, err
	}
	ck := &checkpoint.Checkpoint{Model: fit.Model,
		Manifest: checkpoint.Manifest{JEIRTVersion: opt.Version, Created: time.Now().UTC().Format(time.RFC3339),
			Encoder: encInfo,
			Model:   checkpoint.ModelInfo{Dropout: cfg.Model.Dropout, Residual: cfg.Model.Residual},
			Config:  cfgJSON}}
	ck.Manifest.Routing = trained.Routing
	dom := trained.Domain
	// write puts the checkpoint with met into cfg.Output; replace is true
	// for the second write of a run, which adds the baselines.
	write := func(replace bool) error {
		metJSON, err := met.Marshal()
		if err != nil {
			return err
		}
		ck.Files = map[string][]byte{checkpoint.MetricsFile: metJSON}
		if dom != nil {
			if ck.Files[checkpoint.DomainFile], err = dom.Marshal(); err != nil {
				return err
			}
		}
		ck.Manifest.Metrics = metJSON[:len(metJSON)-1]
		return ck.Write(cfg.Output, replace)
	}
	baselines := false
	if byModel {
		// The experiment runs to completion once the model is trained.
		if err := newModelExperiment(context.WithoutCancel(ctx), cfg, opt, ck, tr, trainR, valR, trainAll, testR, features, enc.Dim(), met, log); err != nil {
			return nil, err
		}
	} else {
		met.Test = eval.ScoreResponses(jeirt.PredictJEIRT(fit.Model, testR), testR).Scores()
		if splitName(cfg) == "benchmark" {
			met.HeldOutBenchmarks = eval.HeldBenchmarks(testR)
			met.Alignment = eval.BenchmarkAlignment(fit.Model.Q, fit.Model.Dim, all.ItemGroup, met.HeldOutBenchmarks)
			eval.AddPerModel(met.Alignment, fit.Model.Q, fit.Model.Dim, trainR, testR, jeirt.PredictJEIRT(fit.Model, testR))
		}
		baselines = !fit.Interrupted && !opt.NoBaselines
	}
	if baselines {
		// The trained model is written before the baselines run, so that
		// Ctrl-C (or a kill) during them keeps it; its metrics say so until
		// the second write adds them.
		warnings := met.Warnings
		met.Warnings = append(slices.Clip(warnings), "the baselines did not finish (interrupted): metrics.json has none")
		if err := write(opt.Replace); err != nil {
			return nil, err
		}
		met.Warnings = warnings
		log.Printf("running the baselines (Ctrl-C stops them and keeps the trained model, already in %s)", cfg.Output)
		var bl *Baselines
		bl, err = RunBaselines(ctx, trainR, valR, testR, features, enc.Dim(), device, opt.MaxMemory, log)
		if err == nil {
			met.Baselines, met.BaselineNotes, met.BaselineSettings, met.KNNK = bl.Scores, bl.Notes, bl.Settings, bl.KNNK
		}
		if errors.Is(err, context.Canceled) {
			met.Warnings = append(met.Warnings, "the baselines did not finish (interrupted): metrics.json has none")
			met.Baselines, met.KNNK = nil, 0
			log.Printf("interrupted during the baselines: %s keeps the trained model, without them", cfg.Output)
			if opt.Results != nil {
				opt.Results(fit.Stop, met)
			}
			return &Result{Fit: fit, Metrics: met, Checkpoint: ck}, nil
		}
		if err != nil {
			return nil, err
		}
	}
	if opt.Results != nil {
		opt.Results(fit.Stop, met)
	}
	if err := write(opt.Replace || baselines); err != nil {
		return nil, err
	}
	log.Printf("wrote %s (model.safetensors, manifest.json, metrics.json)", cfg.Output)
	return &Result{Fit: fit, Metrics: met, Checkpoint: ck}, nil
}

// newModelExperiment onboards the held-out models of testR onto ck and scores
// them on the cells not used for the fit (pooled in met.Test, per model in
// met.NewModels), with the per-model mean and the items' mean as baselines.
// With split.joint it also trains the same JE-IRT on the training cells plus
// the onboarding cells and scores its rows of the held-out models on the same
// cells (baseline "joint").
func newModelExperiment(ctx context.Context, cfg *Config, opt Options, ck *checkpoint.Checkpoint, tr jeirt.Trainer,
	trainR, valR, trainAll, testR *model.Responses, features []float32, dim int, met *checkpoint.RunMetrics, log progress.Logf) error {
	met.OnboardFraction = cfg.Split.OnboardFraction
	log.Printf("onboarding %d held-out models from %.0f%% of their cells each", len(met.HeldOutModels), 100*cfg.Split.OnboardFraction)
	res, err := onboard.HeldOut(ctx, ck, testR, cfg.Split.OnboardFraction, cfg.Split.Seed, nil)
	if err != nil {
		return err
	}
	var held, fitCells []int32
	var prob, meanProb []float64
	for _, o := range res {
		held = append(held, o.HeldCells...)
		fitCells = append(fitCells, o.FitCells...)
		prob = append(prob, o.Prob...)
		meanProb = append(meanProb, o.ModelMeanProb...)
	}
	heldR := testR.Subset(held)
	met.Test = eval.ScoreResponses(prob, heldR).Scores()
	met.Cells["test"] = heldR.Len()
	met.Cells["onboard"] = len(fitCells)
	met.Baselines = map[string]model.Scores{"model_mean": eval.ScoreResponses(meanProb, heldR).Scores()}
	// The items' mean needs no model row: from the training cells.
	met.Baselines["item_mean"] = eval.ScoreResponses(eval.ItemMeanPredict(trainAll, heldR), heldR).Scores()
	var jointProb []float64
	if cfg.Split.Joint {
		log.Printf("joint reference: training on the training cells plus the %d onboarding cells", len(fitCells))
		parts, _ := MergeResponses(trainR, testR.Subset(fitCells), valR, heldR)
		j := tr
		j.Progress, j.Warn = nil, nil
		jf, err := j.Fit(ctx, mergeTwo(parts[0], parts[1]), parts[2], features, dim)
		if err != nil {
			return fmt.Errorf("joint reference: %w", err)
		}
		jointProb = jeirt.PredictJEIRT(jf.Model, parts[3])
		met.Baselines["joint"] = eval.ScoreResponses(jointProb, heldR).Scores()
	}
	off := 0
	for _, o := range res {
		n := len(o.HeldCells)
		lab := heldR.Subset(cellRange(off, off+n))
		nm := checkpoint.NewModel{Name: o.Name, FitCells: len(o.FitCells), ScoredCells: n,
			Onboarded: eval.ScoreResponses(o.Prob, lab).Scores(), ModelMean: eval.ScoreResponses(o.ModelMeanProb, lab).Scores(),
			Score: o.Score, TrueScore: o.True}
		if jointProb != nil {
			js := eval.ScoreResponses(jointProb[off:off+n], lab).Scores()
			nm.Joint = &js
		}
		met.NewModels = append(met.NewModels, nm)
		off += n
	}
	met.ScoreCoverage, met.ScoreMAE = scoreCoverage(met.NewModels)
	return nil
}

// scoreCoverage is the share of the new models whose score interval covers
// their true score, and the mean absolute error of their scores (nil, nil
// without a scored model).
func scoreCoverage(nms []checkpoint.NewModel) (coverage, mae *float64) {
	var cover, n, abs float64
	for _, nm := range nms {
		if s := nm.Score; s != nil {
			n++
			abs += math.Abs(s.Score - nm.TrueScore)
			if s.Lo <= nm.TrueScore && nm.TrueScore <= s.Hi {
				cover++
			}
		}
	}
	if n == 0 {
		return nil, nil
	}
	c, m := cover/n, abs/n
	return &c, &m
}

// cellRange is the cells lo, lo+1, ..., hi−1.
func cellRange(lo, hi int) []int32 {
	out := make([]int32, 0, hi-lo)
	for c := lo; c < hi; c++ {
		out = append(out, int32(c))
	}
	return out
}

// mergeTwo is the cells of a and b, which share their model and item lists.
func mergeTwo(a, b *model.Responses) *model.Responses {
	r := *a
	r.Model = append(append([]int32(nil), a.Model...), b.Model...)
	r.Item = append(append([]int32(nil), a.Item...), b.Item...)
	r.Label = append(append([]uint8(nil), a.Label...), b.Label...)
	r.Trials, r.Successes = nil, nil
	if a.Weighted() || b.Weighted() {
		r.Model, r.Item, r.Label = r.Model[:0], r.Item[:0], r.Label[:0]
		for _, p := range []*model.Responses{a, b} {
			for c := range p.Label {
				r.AppendFrom(p.Model[c], p.Item[c], p, c)
			}
		}
	}
	r.Invalidate()
	return &r
}

// modelsWithCells lists the models of r that have cells, in r's order.
func modelsWithCells(r *model.Responses) []string {
	has := make([]bool, r.NumModels())
	for _, i := range r.Model {
		has[i] = true
	}
	var out []string
	for i, h := range has {
		if h {
			out = append(out, r.Models[i])
		}
	}
	return out
}

// keepModelsWithCells re-indexes trainR and valR (sharing one model list) to
// the models trainR has cells for, so that the trained table holds no row a
// training cell never touched.
func keepModelsWithCells(trainR, valR *model.Responses) (*model.Responses, *model.Responses) {
	newIdx := make([]int32, trainR.NumModels())
	for i := range newIdx {
		newIdx[i] = -1
	}
	var names []string
	for _, i := range trainR.Model {
		if newIdx[i] < 0 {
			newIdx[i] = 0
		}
	}
	for i := range newIdx {
		if newIdx[i] == 0 {
			newIdx[i] = int32(len(names))
			names = append(names, trainR.Models[i])
		}
	}
	remap := func(r *model.Responses) *model.Responses {
		out := *r
		out.Models = names
		out.Model, out.Item, out.Label, out.Trials, out.Successes = nil, nil, nil, nil, nil
		for c := range r.Label {
			if k := newIdx[r.Model[c]]; k >= 0 {
				out.AppendFrom(k, r.Item[c], r, c)
			}
		}
		out.Invalidate()
		return &out
	}
	return remap(trainR), remap(valR)
}

func splitName(cfg *Config) string {
	if cfg.Data.Responses == "" {
		return "given"
	}
	return cfg.Split.By
}

// LoadSplits reads the data a config names and returns its train, validation
// and test cells plus all cells, sharing one list of models and items. By
// model, the test cells are the held-out models' and the validation cells a
// cell split of the other models' (split.val of all cells). warn receives
// what looked wrong but was read (a matrix that looks transposed), in the
// config's words; nil is silent.
func LoadSplits(cfg *Config, warn progress.Logf) (trainR, valR, testR, all *model.Responses, err error) {
	ro := read.Options{Format: cfg.Data.Format, Items: cfg.Data.Items, Duplicates: cfg.Data.Duplicates, Graded: cfg.Data.Graded,
		Columns: cfg.Data.Columns, Delimiter: cfg.Data.Delimiter, Benchmark: holdList(cfg.Data.Benchmark), Condition: cfg.Data.Condition, ScoreMap: cfg.Data.ScoreMap}
	readFile := func(path string) (*model.Responses, error) {
		r, rep, err := read.File(path, ro)
		if err == nil && rep.Warned != nil {
			// In the config's words: data.format, not --format.
			warn.Printf("warning: %s", rep.Warned.Render(func(f string) string { return "data." + model.FieldName(f) + ":" }))
		}
		return r, err
	}
	if cfg.Data.Responses != "" {
		all, err = readFile(cfg.Data.Responses)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if cfg.Split.By == "model" {
			// Whole models for test; validation cells (for early stopping)
			// from the training models, whose rows the table learns.
			trainR, _, testR, err = eval.Split(all, eval.SplitOptions{Test: cfg.Split.Test, Seed: cfg.Split.Seed, By: "model"})
			if err != nil {
				return nil, nil, nil, nil, err
			}
			trainR, valR, _, err = eval.Split(trainR, eval.SplitOptions{Val: cfg.Split.Val / (1 - cfg.Split.Test), Seed: cfg.Split.Seed, By: "cell"})
			return trainR, valR, testR, all, err
		}
		trainR, valR, testR, err = eval.Split(all, eval.SplitOptions{Val: cfg.Split.Val, Test: cfg.Split.Test, Seed: cfg.Split.Seed, By: cfg.Split.By,
			Hold: holdList(cfg.Split.Hold)})
		return trainR, valR, testR, all, err
	}
	var parts []*model.Responses
	for _, p := range []string{cfg.Data.Train, cfg.Data.Val, cfg.Data.Test} {
		r, err := readFile(p)
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
			Model: make([]int32, p.Len()), Item: make([]int32, p.Len()), Label: append([]uint8(nil), p.Label...),
			Trials: append([]int32(nil), p.Trials...), Successes: append([]float64(nil), p.Successes...)}
		for c := range p.Label {
			r.Model[c] = mIdx[p.Models[p.Model[c]]]
			r.Item[c] = iIdx[p.Items[p.Item[c]]]
		}
		out[k] = r
		for c := range r.Label {
			all.AppendFrom(r.Model[c], r.Item[c], r, c)
		}
	}
	return out, all
}

// holdList splits split.hold ("a,b") into benchmark names.
func holdList(s string) []string {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}
