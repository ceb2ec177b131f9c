package analyze

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
)

func TestARIAndNMI(t *testing.T) {
	// scikit-learn's documented example: ARI 0.2424...
	if got := ARI([]int{0, 0, 0, 1, 1, 1}, []int{0, 0, 1, 1, 2, 2}); math.Abs(got-0.24242424242424243) > 1e-12 {
		t.Errorf("ARI %v, want 0.242424", got)
	}
	same := []int{2, 2, 0, 0, 1, 1}
	if ARI([]int{0, 0, 1, 1, 2, 2}, same) != 1 || math.Abs(NMI([]int{0, 0, 1, 1, 2, 2}, same)-1) > 1e-12 {
		t.Error("relabelled partition: ARI or NMI is not 1")
	}
	if got := NMI([]int{0, 0, 1, 1}, []int{0, 1, 0, 1}); math.Abs(got) > 1e-12 {
		t.Errorf("independent partitions: NMI %v, want 0", got)
	}
}

// clustered returns J unit-ish directions in dim 8 around one centre per
// category (4 categories), with random lengths that the clustering must
// ignore.
func clustered(J int, noise float64, seed uint64) ([]float32, []string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const dim = 8
	centres := make([][]float64, 4)
	for k := range centres {
		centres[k] = make([]float64, dim)
		for d := range centres[k] {
			centres[k][d] = rng.NormFloat64()
		}
	}
	q := make([]float32, J*dim)
	cat := make([]string, J)
	for j := 0; j < J; j++ {
		k := j % 4
		cat[j] = fmt.Sprintf("subject-%d", k)
		scale := 0.2 + 3*rng.Float64()
		for d := 0; d < dim; d++ {
			q[j*dim+d] = float32(scale * (centres[k][d] + noise*rng.NormFloat64()))
		}
	}
	return q, cat
}

func TestDirectionsRecoversSubjects(t *testing.T) {
	q, cat := clustered(200, 0.3, 2)
	res, err := Directions{Seed: 1}.Run(q, 8, cat)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ARI %.4f NMI %.4f", res.ARI, res.NMI)
	if res.K != 4 || res.ARI < 0.95 || res.NMI < 0.95 {
		t.Errorf("k %d ARI %.4f NMI %.4f (want 4, ≥ 0.95)", res.K, res.ARI, res.NMI)
	}
	for k, c := range res.Clusters {
		if len(c.Top) == 0 || len(c.Nearest) == 0 || c.Top[0].Category != c.Nearest[0].Category {
			t.Errorf("cluster %d: top %v nearest %v", k, c.Top, c.Nearest)
		}
	}
	// Directions that do not depend on the subject: no agreement.
	rng := rand.New(rand.NewPCG(9, 9))
	for k := range q {
		q[k] = float32(rng.NormFloat64())
	}
	res, err = Directions{Seed: 1}.Run(q, 8, cat)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.ARI) > 0.05 || res.NMI > 0.1 {
		t.Errorf("random directions: ARI %.4f NMI %.4f (want about 0)", res.ARI, res.NMI)
	}
	var buf bytes.Buffer
	if err := res.WriteClusters(&buf); err != nil || !strings.HasPrefix(buf.String(), "cluster,size,top_categories") {
		t.Errorf("clusters.csv: %v\n%s", err, buf.String())
	}
}

// Group a's questions point along e1, group b's along e2; model i's row is
// s_i·(e1 − e2) plus a common part, and its answers follow JE-IRT's P. The
// probe's axis is (e1 − e2)/√2, the projections are s_i·√2, and the models
// further along it do relatively better on a.
func TestProbeRecoversAxis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const dim, N, per = 4, 12, 30
	ck := &model.JEIRT{Dim: dim}
	var cat []string
	for j := 0; j < 2*per; j++ {
		g, axis := "a", 0
		if j >= per {
			g, axis = "b", 1
		}
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(0.05 * rng.NormFloat64())
		}
		v[axis] += 1.2
		ck.Q = append(ck.Q, v...)
		ck.Items = append(ck.Items, fmt.Sprintf("q%d", j))
		cat = append(cat, g)
	}
	s := make([]float64, N)
	for i := 0; i < N; i++ {
		s[i] = -1.5 + 3*float64(i)/float64(N-1)
		ck.M = append(ck.M, float32(2+s[i]), float32(2-s[i]), 0.3, 0)
		ck.Models = append(ck.Models, fmt.Sprintf("m%02d", i))
	}
	r := &model.Responses{Models: ck.Models, Items: ck.Items}
	for i := 0; i < N; i++ {
		for j := range ck.Items {
			var y uint8
			if rng.Float64() < ck.Prob(i, ck.ItemEmbedding(j)) {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	res, err := Probe(ck, cat, "a", "b", r)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Axis[0]-1/math.Sqrt2) > 0.05 || math.Abs(res.Axis[1]+1/math.Sqrt2) > 0.05 || res.ItemAUC != 1 {
		t.Errorf("axis %.3f, item AUC %v", res.Axis, res.ItemAUC)
	}
	var proj []float64
	for i, m := range res.Models {
		proj = append(proj, m.Projection)
		if math.Abs(m.Projection-s[i]*math.Sqrt2) > 0.15 {
			t.Errorf("model %d: projection %.3f, want %.3f", i, m.Projection, s[i]*math.Sqrt2)
		}
	}
	t.Logf("Spearman(projection, accuracy on a − on b) = %.3f", res.AccuracyGapSpearman)
	if eval.Spearman(proj, s) != 1 || res.AccuracyGapSpearman < 0.8 {
		t.Errorf("Spearman(projection, s) %v, with the accuracy gap %v", eval.Spearman(proj, s), res.AccuracyGapSpearman)
	}
	if _, err := Probe(ck, cat, "a", "c", nil); err == nil {
		t.Error("unknown group: no error")
	}
}

// 50 ordinary 2PL items, 5 whose stronger models do worse (a = −1.5) and 5
// that are easy in the middle of the ability range and hard at both ends:
// ICC flags the second kind negative_slope and the third non_monotone.
func TestICCFlagsNegativeAndNonMonotoneItems(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const N, J = 300, 60
	r := &model.Responses{}
	theta := make([]float64, N)
	for i := range theta {
		theta[i] = rng.NormFloat64()
		r.Models = append(r.Models, fmt.Sprintf("m%03d", i))
	}
	for j := 0; j < J; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%02d", j))
	}
	a, d := make([]float64, J), make([]float64, J)
	for j := range a {
		a[j], d[j] = 0.8+1.2*rng.Float64(), rng.NormFloat64()*0.8
	}
	for i := 0; i < N; i++ {
		for j := 0; j < J; j++ {
			p := model.Sigmoid(a[j]*theta[i] + d[j])
			switch {
			case j >= 50 && j < 55:
				p = model.Sigmoid(-1.5*theta[i] + d[j])
			case j >= 55:
				p = model.Sigmoid(2 - 3*theta[i]*theta[i])
			}
			var y uint8
			if rng.Float64() < p {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	fit, err := irt.CBMM{}.Fit(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ICC{}.Run(r, fit)
	if err != nil {
		t.Fatal(err)
	}
	flagged := map[string][]int{}
	for j, it := range res.Items {
		for _, f := range it.Flags {
			flagged[f] = append(flagged[f], j)
		}
	}
	t.Logf("negative_slope: %v; non_monotone: %v", flagged[FlagNegativeSlope], flagged[FlagNonMonotone])
	if fmt.Sprint(flagged[FlagNegativeSlope]) != "[50 51 52 53 54]" {
		t.Errorf("negative_slope flags %v, want items 50-54", flagged[FlagNegativeSlope])
	}
	nm := 0
	for _, j := range flagged[FlagNonMonotone] {
		if j >= 55 {
			nm++
		} else if j < 50 {
			t.Errorf("ordinary item %d flagged non_monotone", j)
		}
	}
	if nm < 4 {
		t.Errorf("only %d of the 5 non-monotone items flagged", nm)
	}
	// The fitted curve of an ordinary item follows its empirical curve.
	it := res.Items[0]
	for k := range it.N {
		if math.Abs(it.Empirical[k]-it.Fitted[k]) > 0.15 {
			t.Errorf("item 0 bin %d: empirical %.3f fitted %.3f", k, it.Empirical[k], it.Fitted[k])
		}
	}
	var buf bytes.Buffer
	if err := res.WriteCurves(&buf); err != nil || strings.Count(buf.String(), "\n") != 1+J*5 {
		t.Errorf("icc_curves.csv: %v, %d lines", err, strings.Count(buf.String(), "\n"))
	}
	buf.Reset()
	if err := res.WriteFigure(&buf, 4); err != nil || !strings.Contains(buf.String(), "<svg") || !strings.Contains(buf.String(), "q50") {
		t.Errorf("icc.svg: %v (%d bytes)", err, buf.Len())
	}
}

func TestDeriveGroups(t *testing.T) {
	ids := []string{"azerbaijani_biology_17", "kazakh_math-3", "plain"}
	text := []string{"[alpacaeval-easy] <|im_start|>...", "  [xstest-should-refuse] hi", "no bracket"}
	for _, tc := range []struct{ rule, want string }{
		{RuleTextBracket, "[alpacaeval-easy xstest-should-refuse ]"},
		{RuleIDStem, "[azerbaijani_biology kazakh_math plain]"},
		{RuleIDFirst, "[azerbaijani kazakh ]"},
	} {
		got, err := DeriveGroups(ids, text, tc.rule)
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%s: %v (%v), want %s", tc.rule, got, err, tc.want)
		}
	}
	if _, err := DeriveGroups(ids, nil, RuleTextBracket); err == nil {
		t.Error("text rule without texts: no error")
	}
}
