package jeirt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/train/backend"
	G "gorgonia.org/gorgonia"
)

// tinyProblem is a batch with repeated questions and models, dropout and
// (optionally) the residual, small enough for finite differences.
func tinyProblem(residual bool, perPair bool) (*backend.JEIRTParams, *backend.JEIRTBatch) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := &backend.JEIRTParams{InputDim: 5, Hidden: 6, Dim: 3, NumModels: 4, NumItems: 7}
	fill := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for k := range v {
			v[k] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	p.W1, p.C1 = fill(30, 0.5), fill(6, 0.3)
	p.W2, p.C2 = fill(18, 0.5), fill(3, 0.3)
	p.M = fill(12, 1)
	if residual {
		p.R, p.ResidualL2 = fill(21, 0.3), 0.7
	}
	feat := fill(7*5, 1)
	items := []int32{2, 5, 0}
	pairs := []struct{ row, model int32 }{{0, 1}, {0, 3}, {1, 1}, {2, 0}, {2, 2}, {1, 3}, {0, 0}}
	b := &backend.JEIRTBatch{}
	for k, pr := range pairs {
		b.Model = append(b.Model, pr.model)
		b.Label = append(b.Label, float32(k%2))
		if perPair {
			b.Item = append(b.Item, items[pr.row])
			b.Row = append(b.Row, int32(k))
		} else {
			b.Row = append(b.Row, pr.row)
		}
	}
	if !perPair {
		b.Item = items
	}
	for _, j := range b.Item {
		b.X = append(b.X, feat[int(j)*5:int(j)*5+5]...)
	}
	b.Mask = make([]float32, len(b.Item)*6)
	for k := range b.Mask {
		if rng.Float64() > 0.3 {
			b.Mask[k] = 1 / 0.7
		}
	}
	return p, b
}

// gradInto runs gf on batch b at p and copies its gradient into g.
func gradInto(gf gradientFunc, p *backend.JEIRTParams, b *backend.JEIRTBatch, g *backend.JEIRTParams) (float64, error) {
	grads, loss, err := gf.gradient(p, b)
	if err != nil {
		return 0, err
	}
	for k, s := range g.Slices() {
		copy(s, grads[k])
	}
	return loss, nil
}

func TestJEIRTGraphGradientFiniteDifference(t *testing.T) {
	for _, tc := range []struct {
		name              string
		residual, perPair bool
	}{{"by-question", false, false}, {"per-pair", false, true}, {"residual", true, false}, {"residual per-pair", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, b := tinyProblem(tc.residual, tc.perPair)
			g := p.ZeroLike()
			if _, err := (graph64Gradient{}).gradient(p, b, g); err != nil {
				t.Fatal(err)
			}
			// Central differences of the float64 loss; parameters are float32,
			// so step on values exactly representable and compare loosely.
			const h = 1.0 / 512
			lossAt := func() float64 {
				l, err := (graph64Gradient{}).gradient(p, b, p.ZeroLike())
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			names := []string{"W1", "c1", "W2", "c2", "M", "R"}
			for s, arr := range p.Slices() {
				for k := range arr {
					old := arr[k]
					arr[k] = old + h
					lp := lossAt()
					arr[k] = old - h
					lm := lossAt()
					arr[k] = old
					fd := (lp - lm) / (2 * h)
					got := float64(g.Slices()[s][k])
					if math.Abs(fd-got) > 2e-3*math.Max(1, math.Abs(fd)) {
						t.Errorf("%s[%d]: graph gradient %.6f, finite difference %.6f", names[s], k, got, fd)
					}
				}
			}
		})
	}
}

func TestJEIRTFusedMatchesGraph(t *testing.T) {
	for _, tc := range []struct {
		name              string
		residual, perPair bool
	}{{"by-question", false, false}, {"per-pair", false, true}, {"residual", true, false}, {"residual per-pair", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, b := tinyProblem(tc.residual, tc.perPair)
			gg, gf := p.ZeroLike(), p.ZeroLike()
			lg, err := (graph64Gradient{}).gradient(p, b, gg)
			if err != nil {
				t.Fatal(err)
			}
			lf, _ := gradInto(newFusedGradient(p), p, b, gf)
			if math.Abs(lg-lf) > 1e-6 {
				t.Errorf("loss: graph %v, fused %v", lg, lf)
			}
			var nonzero int
			for s := range gg.Slices() {
				for k, v := range gg.Slices()[s] {
					if v != 0 {
						nonzero++
					}
					if w := gf.Slices()[s][k]; math.Abs(float64(v-w)) > 1e-5*math.Max(1, math.Abs(float64(v))) {
						t.Errorf("param %d[%d]: graph %v, fused %v", s, k, v, w)
					}
				}
			}
			if nonzero < 40 {
				t.Errorf("only %d nonzero gradient entries: the test batch exercises too little", nonzero)
			}
		})
	}
}

// One AdamW step against values computed by hand from PyTorch's formula.
func TestAdamWStep(t *testing.T) {
	p := [][]float32{{1, -2}}
	g := [][]float32{{0.5, 0}}
	a := newAdamW(backend.AdamW{WeightDecay: 0.01}, p)
	a.step(0.1, p, g)
	// t=1: m̂ = g, v̂ = g², update = lr·g/(|g|+ε) ≈ 0.1·sign(g); decay θ·(1−0.001).
	want0 := 1*(1-0.1*0.01) - 0.1*0.5/(0.5+1e-8)
	want1 := -2 * (1 - 0.1*0.01)
	if math.Abs(float64(p[0][0])-want0) > 1e-6 || math.Abs(float64(p[0][1])-want1) > 1e-6 {
		t.Errorf("after one step %v, want [%v %v]", p[0], want0, want1)
	}
	a.step(0.1, p, g)
	// t=2: m = 0.9·0.05+0.05 = 0.095, v = 0.999·0.00025+0.00025; m̂ = 0.5, v̂ = 0.25.
	want0 = want0*(1-0.001) - 0.1*0.5/(0.5+1e-8)
	if math.Abs(float64(p[0][0])-want0) > 1e-5 {
		t.Errorf("after two steps %v, want %v", p[0][0], want0)
	}
}

// The compiled float32 graph (the default step) against the float64 graph
// oracle and the fused step, on every batch kind, reusing one compiled graph
// across batches and parameter updates: the loss to 1e-5 relative, each
// gradient entry to 1e-5 of the largest entry of its parameter array (float32
// sums of cancelling terms cannot promise 1e-5 of every tiny entry).
func TestJEIRTGraphMatchesFused(t *testing.T) {
	names := []string{"W1", "c1", "W2", "c2", "M", "R"}
	for _, tc := range []struct {
		name              string
		residual, perPair bool
	}{{"by-question", false, false}, {"per-pair", false, true}, {"residual", true, false}, {"residual per-pair", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, b := tinyProblem(tc.residual, tc.perPair)
			graph := newGraphGradient(p)
			for round := 0; round < 3; round++ {
				if round > 0 { // move the parameters as an optimiser would: the graph must read them afresh
					for _, s := range p.Slices() {
						for k := range s {
							s[k] *= 0.9
						}
					}
					b.Mask = nil // and a batch without dropout
				}
				gc, gr, gf := p.ZeroLike(), p.ZeroLike(), p.ZeroLike()
				lc, err := gradInto(graph, p, b, gc)
				if err != nil {
					t.Fatal(err)
				}
				lr, err := (graph64Gradient{}).gradient(p, b, gr)
				if err != nil {
					t.Fatal(err)
				}
				lf, _ := gradInto(newFusedGradient(p), p, b, gf)
				if math.Abs(lc-lr) > 1e-5*math.Abs(lr) || math.Abs(lc-lf) > 1e-5*math.Abs(lf) {
					t.Errorf("round %d loss: graph %v, float64 graph %v, fused %v", round, lc, lr, lf)
				}
				if !tc.residual {
					// Without the residual the graph's ops are the fused
					// step's calls: the same bits.
					if lc != lf {
						t.Errorf("round %d loss: graph %v, fused %v, want the same bits", round, lc, lf)
					}
					for s := range gc.Slices() {
						for k, v := range gc.Slices()[s] {
							if w := gf.Slices()[s][k]; math.Float32bits(v) != math.Float32bits(w) {
								t.Errorf("round %d %s[%d]: graph %v, fused %v, want the same bits", round, names[s], k, v, w)
							}
						}
					}
				}
				for s := range gc.Slices() {
					var scale float64
					for _, v := range gr.Slices()[s] {
						scale = math.Max(scale, math.Abs(float64(v)))
					}
					close := func(a, b float32) bool { return math.Abs(float64(a-b)) <= 1e-5*scale }
					for k, v := range gc.Slices()[s] {
						if w := gr.Slices()[s][k]; !close(v, w) {
							t.Errorf("round %d %s[%d]: graph %v, float64 graph %v", round, names[s], k, v, w)
						}
						if w := gf.Slices()[s][k]; !close(v, w) {
							t.Errorf("round %d %s[%d]: graph %v, fused %v", round, names[s], k, v, w)
						}
					}
				}
			}
			if len(graph.graphs) != 1 {
				t.Errorf("%d graphs compiled for one batch shape, want 1", len(graph.graphs))
			}
		})
	}
}

// Central differences of the compiled float32 graph's own loss.
func TestJEIRTCompiledGraphFiniteDifference(t *testing.T) {
	p, b := tinyProblem(true, false)
	graph := newGraphGradient(p)
	g := p.ZeroLike()
	if _, err := gradInto(graph, p, b, g); err != nil {
		t.Fatal(err)
	}
	const h = 1.0 / 256
	lossAt := func() float64 {
		l, err := gradInto(graph, p, b, p.ZeroLike())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for s, arr := range p.Slices() {
		for k := range arr {
			old := arr[k]
			arr[k] = old + h
			lp := lossAt()
			arr[k] = old - h
			lm := lossAt()
			arr[k] = old
			fd := (lp - lm) / (2 * h)
			if got := float64(g.Slices()[s][k]); math.Abs(fd-got) > 3e-3*math.Max(1, math.Abs(fd)) {
				t.Errorf("param %d[%d]: graph gradient %.6f, finite difference %.6f", s, k, got, fd)
			}
		}
	}
}

// graphRun (the loop the graph step runs its graphs with) against
// Gorgonia's own tape machine on the same compiled graphs, with and without
// the residual (whose penalty and gather are Gorgonia's ops): the same loss
// and gradients, bit for bit.
func TestGraphRunMatchesTapeMachine(t *testing.T) {
	for _, residual := range []bool{false, true} {
		p, b := tinyProblem(residual, false)
		st := &graphState{b: b}
		jg, err := buildJEIRTGraph(p, b.Rows(), st)
		if err != nil {
			t.Fatal(err)
		}
		if residual {
			for _, r := range b.Row {
				jg.rowW[r] += 1 / float32(len(b.Row))
			}
			for k, j := range b.Item {
				jg.item[k] = int(j)
			}
		}
		if err := jg.run.all(); err != nil {
			t.Fatal(err)
		}
		var ours [][]float32
		for _, n := range jg.grads {
			ours = append(ours, append([]float32(nil), jg.run.value(n).Data().([]float32)...))
		}
		loss := jg.link.loss
		vm := G.NewTapeMachine(jg.g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if jg.link.loss != loss {
			t.Errorf("residual %v: loss %v, tape machine %v", residual, loss, jg.link.loss)
		}
		for k, n := range jg.params {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range gv.Data().([]float32) {
				if math.Float32bits(v) != math.Float32bits(ours[k][i]) {
					t.Fatalf("residual %v: gradient of %s[%d] %v, tape machine %v", residual, n.Name(), i, ours[k][i], v)
				}
			}
		}
		vm.Close()
	}
}
