package onboard

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
)

// routeSharedData is ../shared/data next to the repository root, or "" when absent.
func routeSharedData(tb testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// BenchmarkOnboardCurve is the new-model experiment of README on SWE-bench
// Verified and RewardBench (run it once: -benchtime 1x; JEIRT_BENCH_DATA=swebench-verified
// or rewardbench picks one):
//
//  1. hold out 10% of the models (train.Split by model, seed 42, or
//     JEIRT_BENCH_SEED); each held-out model's answers are split 80/20
//     (seeded) into a pool and test cells;
//  2. "old": JE-IRT trained on the other models only (10% of their cells for
//     early stopping); "joint": the same run with the held-out models' pools added;
//  3. each held-out model is onboarded into "old" (Onboard, population prior)
//     from a fraction f of its pool drawn at random (the mean of 5 seeded
//     draws), or from as many questions of its pool picked by SuggestItems
//     (D-optimal) and SuggestItemsV (V-optimal), or asked adaptively in 4
//     rounds (a random quarter, then SuggestNext at the posterior of the
//     answers so far; the mean over 5 seeds), and scored on its test cells
//     next to its jointly trained row and the model-mean baseline; "adaptive
//     wins" counts the held-out models whose mean log loss is lower asked
//     adaptively than at random.
//
// JEIRT_BENCH_CACHE=DIR keeps the two trained models between runs.
func BenchmarkOnboardCurve(b *testing.B) {
	root := routeSharedData(b)
	if root == "" {
		b.Skip("../shared/data is absent")
	}
	sets := []string{"swebench-verified", "rewardbench"}
	if s := os.Getenv("JEIRT_BENCH_DATA"); s != "" {
		sets = strings.Split(s, ",")
	}
	for range b.N {
		for _, set := range sets {
			onboardCurve(b, filepath.Join(root, set))
		}
	}
}

// logf prints a result line to standard output: benchmark logs are cut
// after a few lines.
func logf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func onboardCurve(b *testing.B, dir string) {
	ctx := context.Background()
	r, _, err := read.File(filepath.Join(dir, "response_matrix.csv"), read.Options{Items: filepath.Join(dir, "item_content.csv")})
	if err != nil {
		b.Fatal(err)
	}
	enc, _ := encoder.Open("hash")
	features, err := jeirt.EncodeItems(ctx, enc, r, nil)
	if err != nil {
		b.Fatal(err)
	}
	seed, suffix := int64(42), ""
	if s := os.Getenv("JEIRT_BENCH_SEED"); s != "" {
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			b.Fatalf("JEIRT_BENCH_SEED: %v", err)
		}
	}
	if seed != 42 {
		suffix = fmt.Sprintf("-s%d", seed) // cached checkpoints of other splits
	}
	_, _, heldR, err := eval.Split(r, eval.SplitOptions{Test: 0.1, Seed: seed, By: "model"})
	if err != nil {
		b.Fatal(err)
	}
	isNew := make([]bool, r.NumModels())
	var newModels []int
	for _, c := range heldR.Model {
		if !isNew[c] {
			isNew[c] = true
			newModels = append(newModels, int(c))
		}
	}
	byModel := r.ByModel()
	pool := map[int][]int32{}
	test := map[int][]int32{}
	var oldTrain, val, joint []int32
	for i := 0; i < r.NumModels(); i++ {
		fit, held := fractionSplit(byModel.Row(i), 0.8, 42, r.Models[i])
		if isNew[i] {
			pool[i], test[i] = fit, held
			joint = append(joint, fit...)
			continue
		}
		v, t := fractionSplit(byModel.Row(i), 0.1, 43, r.Models[i])
		val = append(val, v...)
		oldTrain = append(oldTrain, t...)
		joint = append(joint, t...)
	}
	tr := jeirt.Trainer{Dim: 256, Dropout: 0.5, Epochs: 30, BatchSize: 512, LR: 1e-3, WeightDecay: 0.01, Gamma: 0.97, Patience: 5, Seed: 42}
	start := time.Now()
	// JEIRT_BENCH_CACHE keeps the two trained models between runs.
	fitCached := func(name string, cells []int32) *model.JEIRT {
		cache := os.Getenv("JEIRT_BENCH_CACHE")
		path := filepath.Join(cache, filepath.Base(dir)+"-"+name+suffix)
		if cache != "" {
			if ck, err := checkpoint.Load(path); err == nil {
				return ck.Model
			}
		}
		fit, err := tr.Fit(ctx, r.Subset(cells), r.Subset(val), features, enc.Dim())
		if err != nil {
			b.Fatal(err)
		}
		logf("%s: trained %s, %d epochs (best %d)", filepath.Base(dir), name, fit.EpochsRun, fit.BestEpoch)
		if cache != "" {
			if err := (&checkpoint.Checkpoint{Model: fit.Model}).Write(path, true); err != nil {
				b.Fatal(err)
			}
		}
		return fit.Model
	}
	oldModel, jointModel := fitCached("old", oldTrain), fitCached("joint", joint)
	logf("%s: %d models (%d held out, split seed %d) x %d items; old and joint models ready in %.0fs",
		filepath.Base(dir), r.NumModels(), len(newModels), seed, r.NumItems(), time.Since(start).Seconds())

	om := oldModel
	base := &model.JEIRT{InputDim: om.InputDim, Hidden: om.Hidden, Dim: om.Dim, W1: om.W1, C1: om.C1, W2: om.W2, C2: om.C2,
		Items: om.Items, Q: om.Q}
	for i := 0; i < r.NumModels(); i++ {
		if !isNew[i] {
			base.Models = append(base.Models, om.Models[i])
			base.M = append(base.M, om.ModelEmbedding(i)...)
		}
	}
	ob := Onboard{}
	prior, err := ob.PriorFor(base)
	if err != nil {
		b.Fatal(err)
	}
	q := make([][]float32, r.NumItems())
	for j := range q {
		q[j] = base.ItemEmbedding(j)
	}
	fitScore := func(i int, cells []int32) (acc, ll float64, secs float64) {
		data := &RowData{Dim: base.Dim}
		for _, c := range cells {
			data.Add(q[r.Item[c]], r.Label[c])
		}
		t0 := time.Now()
		row, _, err := ob.FitRow(data, prior)
		if err != nil {
			b.Fatal(err)
		}
		secs = time.Since(t0).Seconds()
		row32 := float32Row(row)
		tc := r.Subset(test[i])
		s := eval.Score(rowProbs(row32, q, tc), tc.Label)
		return s.Accuracy, s.LogLoss, secs
	}
	// Joint and model-mean references on the same test cells.
	var jointAcc, jointLL, meanAcc, meanLL float64
	nNew := float64(len(newModels))
	for _, i := range newModels {
		tc := r.Subset(test[i])
		s := eval.Score(jeirt.PredictJEIRT(jointModel, tc), tc.Label)
		jointAcc += s.Accuracy / nNew
		jointLL += s.LogLoss / nNew
		mm := eval.Score(meanRate(r, pool[i], tc.Len()), tc.Label)
		meanAcc += mm.Accuracy / nNew
		meanLL += mm.LogLoss / nNew
	}
	logf("%s: jointly trained rows on the held-out models' test cells: accuracy %.4f, log loss %.4f; model mean (from the whole pool) %.4f, %.4f",
		filepath.Base(dir), jointAcc, jointLL, meanAcc, meanLL)
	// adaptive asks model i K questions of its pool as `add-model --suggest
	// --answered` does in rounds (askInRounds) and returns the cells asked.
	adaptive := func(i, K int, seed uint64) []int32 {
		cand := make([][]float32, len(pool[i]))
		for k, c := range pool[i] {
			cand[k] = q[r.Item[c]]
		}
		asked, _, err := askInRounds(ctx, cand, K, seed, ob, prior, func(k int) uint8 { return r.Label[pool[i][k]] })
		if err != nil {
			b.Fatal(err)
		}
		cells := make([]int32, len(asked))
		for k, a := range asked {
			cells[k] = pool[i][a]
		}
		return cells
	}
	logf("| fraction | K (mean) | random: acc | log loss | D-optimal: acc | log loss | V-optimal: acc | log loss | adaptive: acc | log loss | adaptive wins | joint acc | gap (random − joint) | fit ms |")
	logf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range []float64{0.01, 0.05, 0.10, 0.25, 1.0} {
		var rAcc, rLL, dAcc, dLL, vAcc, vLL, aAcc, aLL, kMean, secs float64
		var aWins int // held-out models with a lower mean log loss asked adaptively than at random
		for _, i := range newModels {
			// Random questions: the mean over 5 seeded draws.
			var fit []int32
			var randLL float64
			for seed := int64(7); seed < 12; seed++ {
				fit, _ = fractionSplit(pool[i], f, seed, r.Models[i])
				a, l, s := fitScore(i, fit)
				rAcc, rLL, secs = rAcc+a/nNew/5, rLL+l/nNew/5, secs+s/nNew/5
				randLL += l / 5
			}
			kMean += float64(len(fit)) / nNew
			if f == 1 {
				dAcc, dLL, vAcc, vLL, aAcc, aLL = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
				continue
			}
			var adLL float64
			for seed := uint64(7); seed < 12; seed++ {
				a, l, _ := fitScore(i, adaptive(i, len(fit), seed))
				aAcc, aLL = aAcc+a/nNew/5, aLL+l/nNew/5
				adLL += l / 5
			}
			if adLL < randLL {
				aWins++
			}
			cand := make([][]float32, len(pool[i]))
			for k, c := range pool[i] {
				cand[k] = q[r.Item[c]]
			}
			for _, design := range []string{"d", "v"} {
				pick := SuggestItems
				if design == "v" {
					pick = SuggestItemsV
				}
				picks, err := pick(ctx, base, cand, len(fit), prior)
				if err != nil {
					b.Fatal(err)
				}
				cells := make([]int32, len(picks))
				for k, p := range picks {
					cells[k] = pool[i][p.Index]
				}
				a, l, _ := fitScore(i, cells)
				if design == "d" {
					dAcc, dLL = dAcc+a/nNew, dLL+l/nNew
				} else {
					vAcc, vLL = vAcc+a/nNew, vLL+l/nNew
				}
			}
		}
		wins := "-"
		if f < 1 {
			wins = fmt.Sprintf("%d/%d", aWins, len(newModels))
		}
		logf("| %.0f%% | %.0f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %s | %.4f | %+.4f | %.1f |", 100*f, kMean, rAcc, rLL, dAcc, dLL, vAcc, vLL,
			aAcc, aLL, wins, jointAcc, rAcc-jointAcc, 1000*secs)
	}
}
