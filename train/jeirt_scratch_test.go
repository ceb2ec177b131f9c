package train

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/jeirt/jeirt/model"
)

func envf(k string, d float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(k), 64); err == nil {
		return v
	}
	return d
}

func TestScratchJEIRT(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	N, J := int(envf("N", 60)), int(envf("J", 600))
	r, truth, feat := synthJEIRT(t, N, J, 32, 8, 3)
	tr, va, te, _ := Split(r, SplitOptions{Val: 0.1, Test: 0.1, Seed: 42})
	fit, err := JEIRT{Dim: int(envf("DIM", 8)), Hidden: int(envf("H", 64)), Dropout: envf("DROP", 0.1), Epochs: int(envf("EP", 60)), BatchSize: int(envf("BS", 256)), LR: envf("LR", 3e-3), WeightDecay: envf("WD", 0.01), Gamma: envf("GAMMA", 0.97),
		Patience: 8, Seed: 1, Batching: os.Getenv("BATCHING"), Residual: envf("RES", 0)}.Fit(context.Background(), tr, va, feat, 32)
	if err != nil {
		t.Fatal(err)
	}
	var acc, oracle float64
	for c := range te.Label {
		i, j := int(te.Model[c]), int(te.Item[c])
		y := te.Label[c] == 1
		if (fit.Model.Prob(i, fit.Model.ItemEmbedding(j)) >= 0.5) == y {
			acc++
		}
		if (truth.OracleP(i, j) >= 0.5) == y {
			oracle++
		}
	}
	acc /= float64(te.Len())
	oracle /= float64(te.Len())
	norms, trueNorms := make([]float64, r.NumItems()), make([]float64, r.NumItems())
	for j := range norms {
		norms[j] = model.Norm(fit.Model.ItemEmbedding(j))
		for _, v := range truth.Q[j] {
			trueNorms[j] += v * v
		}
	}
	errRate := make([]float64, r.NumItems())
	for j := range errRate {
		for i := 0; i < N; i++ {
			errRate[j] += 1 - truth.OracleP(i, j)
		}
	}
	t.Logf("rho(learned norm, true err) %.3f rho(true norm, true err) %.3f", Spearman(norms, errRate), Spearman(trueNorms, errRate))
	h := fit.History[fit.BestEpoch-1]
	t.Logf("test acc %.4f oracle %.4f rho %.3f best %d/%d trainacc %.3f valacc %.3f vl %.4f s/ep %.2f", acc, oracle, Spearman(norms, trueNorms), fit.BestEpoch, fit.EpochsRun, h.TrainAcc, h.ValAcc, h.ValLoss, fit.SecondsPerEpoch)
}
