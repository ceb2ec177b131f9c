package irtmml

import (
	"fmt"
	"math"

	"github.com/jeirt/jeirt/model/limits"
)

// Certificate is the first-order certificate of an MML2PL fit, as
// irtguard.Certificate is a joint fit's: the gradient of the objective EM
// maximises (the marginal log-likelihood, or with Prior on the items' log
// posterior) in each item's (a, d), at the items the fit returns, divided
// by the item's answers. By Fisher's identity it is the gradient of the
// expected complete-data log-likelihood under the posteriors of an E step
// at those items (Dempster, Laird and Rubin 1977; Louis 1982), which is how
// it is computed: one E step at the returned items, then each item's
// gradient, with no M step after it.
//
// Items answered only right or only wrong are left out unless the prior
// on d makes their optimum finite: their gradient only ever tends to 0.
type Certificate struct {
	MaxGradient float64 // the largest per-answer |gradient| over the certified items (NaN: a non-finite gradient)
	Where       string  // which item: `item "q7"`; "" when no item is certified
	GradTol     float64 // the tolerance converged was judged by (MML2PL.GradTol, 1e-3 by default)
	Items       int     // the items certified
}

// expected is item j's expected answers n and right answers k at each grid
// point under the posteriors post (f.n and f.k's rows of item j, refilled).
func (f *mmlFit) expected(j int, post []float64) (nj, kj []float64) {
	Q := f.Q
	nj, kj = f.n[j*Q:(j+1)*Q], f.k[j*Q:(j+1)*Q]
	clear(nj)
	clear(kj)
	for _, e := range f.itemAns[f.itemStart[j]:f.itemStart[j+1]] {
		w := post[int(e>>1)*Q : int(e>>1+1)*Q]
		w = w[:len(nj)]
		for q := range nj {
			nj[q] += w[q]
		}
		if e&1 == 1 {
			w = w[:len(kj)]
			for q := range kj {
				kj[q] += w[q]
			}
		}
	}
	return nj, kj
}

// certifies reports whether item j has a finite optimum to certify: it was
// answered both right and wrong, or the prior on d bounds its intercept.
func (f *mmlFit) certifies(j int) bool {
	return f.answered[j] > 0 && (f.right[j] > 0 && f.right[j] < f.answered[j] || f.pr.id > 0)
}

// what names the objective: the marginal log-likelihood or, with a prior,
// the items' log posterior.
func (f *mmlFit) what() string {
	if f.pr.on() {
		return "log posterior"
	}
	return "marginal log-likelihood"
}

// certify computes the Certificate at the fit's current items (f.a, f.b),
// judged by tol (0: 1e-3); the fit's posteriors and abilities are not
// changed.
func (f *mmlFit) certify(tol float64) (Certificate, error) {
	if tol == 0 {
		tol = 1e-3
	}
	cert := Certificate{GradTol: tol}
	if err := f.fillTables(); err != nil {
		return cert, err
	}
	post, theta := make([]float64, f.N*f.Q), make([]float64, f.N)
	if _, err := f.estep(post, theta); err != nil {
		return cert, err
	}
	grads := make([]float64, f.J)
	if err := f.forChunks(f.J, f.itemChunk, func(lo, hi int) {
		t0, t1, ps := make([]float64, f.Q), make([]float64, f.Q), make([]float64, f.Q)
		for j := lo; j < hi; j++ {
			grads[j] = -1
			if !f.certifies(j) {
				continue
			}
			nj, kj := f.expected(j, post)
			_, ga, gb, _, _, _ := mmlObjective(f.grid, nj, kj, f.a[j], f.b[j], f.pr, t0, t1, ps)
			grads[j] = math.Max(math.Abs(ga), math.Abs(gb)) / f.answered[j]
			if math.IsNaN(ga) || math.IsNaN(gb) {
				grads[j] = math.NaN()
			}
		}
	}); err != nil {
		return cert, err
	}
	for j, g := range grads {
		if g == -1 {
			continue
		}
		cert.Items++
		if math.IsNaN(g) || g > cert.MaxGradient || cert.Where == "" {
			cert.MaxGradient, cert.Where = g, fmt.Sprintf("item %q", limits.Clip(f.r.Items[j]))
			if math.IsNaN(g) {
				break
			}
		}
	}
	return cert, nil
}
