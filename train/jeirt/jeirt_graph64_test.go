package jeirt

import (
	"fmt"

	"github.com/jeirt/jeirt/train/backend"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// graph64Gradient computes the JE-IRT loss and gradient with a Gorgonia graph
// and symbolic differentiation, in float64. It is the reference the fused CPU
// step is tested against. Gathers are ByIndices on axis 0 of 2-D tensors only:
// tensor v0.9.24's gradient of ByIndices is wrong on 1-D tensors and on the
// last axis, so the per-pair residual penalty enters through per-row weights
// instead of a 1-D gather.
type graph64Gradient struct{}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for k, v := range x {
		out[k] = float64(v)
	}
	return out
}

func ints(x []int32) []int {
	out := make([]int, len(x))
	for k, v := range x {
		out[k] = int(v)
	}
	return out
}

// jeirtGraph64 is the graph of one batch: the loss node and the parameter nodes.
type jeirtGraph64 struct {
	g      *G.ExprGraph
	cost   *G.Node
	params []*G.Node // W1, c1, W2, c2, M, R (when on), as in JEIRTParams.Slices
}

func buildJEIRTGraph64(p *backend.JEIRTParams, b *backend.JEIRTBatch) (jg *jeirtGraph64, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a graph construction error
			err = fmt.Errorf("jeirt graph: %v", r)
		}
	}()
	U, B := b.Rows(), len(b.Row)
	D, H, d := p.InputDim, p.Hidden, p.Dim
	g := G.NewGraph()
	mat := func(name string, rows, cols int, data []float32) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(rows, cols), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(f64(data)))))
	}
	vec := func(name string, data []float64) *G.Node {
		return G.NewVector(g, tensor.Float64, G.WithShape(len(data)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(data))))
	}
	idx := func(name string, data []int32) *G.Node {
		return G.NewVector(g, tensor.Int, G.WithShape(len(data)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(ints(data)))))
	}
	x := mat("x", U, D, b.X)
	w1, c1 := mat("W1", H, D, p.W1), vec("c1", f64(p.C1))
	w2, c2 := mat("W2", d, H, p.W2), vec("c2", f64(p.C2))
	m := mat("M", p.NumModels, d, p.M)
	params := []*G.Node{w1, c1, w2, c2, m}

	// Adapter: q = W2·dropout(relu(W1·x + c1)) + c2, rows of x as a batch.
	h := G.Must(G.Rectify(G.Must(G.BroadcastAdd(G.Must(G.Mul(x, G.Must(G.Transpose(w1)))), c1, nil, []byte{0}))))
	if b.Mask != nil {
		h = G.Must(G.HadamardProd(h, mat("mask", U, H, b.Mask)))
	}
	q := G.Must(G.BroadcastAdd(G.Must(G.Mul(h, G.Must(G.Transpose(w2)))), c2, nil, []byte{0}))
	var rows *G.Node
	if p.R != nil {
		r := mat("R", p.NumItems, d, p.R)
		params = append(params, r)
		rows = G.Must(G.ByIndices(r, idx("item", b.Item), 0))
		q = G.Must(G.Add(q, rows))
	}

	// Link: z = q·m/(‖q‖+1e-8) − ‖q‖ for each pair.
	qp := G.Must(G.ByIndices(q, idx("row", b.Row), 0))
	mp := G.Must(G.ByIndices(m, idx("model", b.Model), 0))
	dot := G.Must(G.Sum(G.Must(G.HadamardProd(qp, mp)), 1))
	norm := G.Must(G.Sqrt(G.Must(G.Sum(G.Must(G.Square(qp)), 1))))
	z := G.Must(G.Sub(G.Must(G.HadamardDiv(dot, G.Must(G.Add(norm, G.NewConstant(1e-8))))), norm))

	// Binary cross-entropy with logits, stable form: max(z,0) − y·z + log(1 + e^−|z|).
	y := vec("y", f64(b.Label))
	bce := G.Must(G.Add(G.Must(G.Sub(G.Must(G.Rectify(z)), G.Must(G.HadamardProd(y, z)))),
		G.Must(G.Log1p(G.Must(G.Exp(G.Must(G.Neg(G.Must(G.Abs(z))))))))))
	cost := G.Must(G.Mean(bce))

	if p.R != nil {
		// λ · mean over pairs of ‖r_j‖² = λ · Σ_rows (pairs on the row / B) ‖r_row‖².
		w := make([]float64, U)
		for _, r := range b.Row {
			w[r] += 1 / float64(B)
		}
		pen := G.Must(G.Sum(G.Must(G.HadamardProd(vec("rowWeight", w), G.Must(G.Sum(G.Must(G.Square(rows)), 1))))))
		cost = G.Must(G.Add(cost, G.Must(G.Mul(G.NewConstant(p.ResidualL2), pen))))
	}
	if _, err := G.Grad(cost, params...); err != nil {
		return nil, err
	}
	return &jeirtGraph64{g: g, cost: cost, params: params}, nil
}

func (graph64Gradient) gradient(p *backend.JEIRTParams, b *backend.JEIRTBatch, grad *backend.JEIRTParams) (float64, error) {
	return graph64GradientRun(p, b, grad)
}

func graph64GradientRun(p *backend.JEIRTParams, b *backend.JEIRTBatch, grad *backend.JEIRTParams) (float64, error) {
	jg, err := buildJEIRTGraph64(p, b)
	if err != nil {
		return 0, err
	}
	vm := G.NewTapeMachine(jg.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return 0, fmt.Errorf("jeirt graph: %w", err)
	}
	out := grad.Slices()
	for k, n := range jg.params {
		gv, err := n.Grad()
		if err != nil {
			return 0, fmt.Errorf("jeirt graph: gradient of %s: %w", n.Name(), err)
		}
		for i, v := range gv.Data().([]float64) {
			out[k][i] = float32(v)
		}
	}
	return jg.cost.Value().Data().(float64), nil
}
