// Command coverage is the coverage study of jeirt's intervals under a prior:
// it takes the default prior's fits of shipped benchmarks as the truth,
// simulates binary 2PL responses from them, refits each simulated set with
// the default prior, and counts how often each method's intervals cover the
// true θ, a and d. It also compares the recovery (RMSE against the truth)
// of the default prior's fit with joint maximum likelihood's (prior none).
// scripts/coverage.sh runs it.
//
//	go run ./scripts/coverage [--data DIR] [--sets 50] [--boot 10] [--reps 50] [--shapes chembench,swebench,lsat7,synth500x40]
//
// Shapes (the truth is always a fit, never a draw from the prior):
//
//	chembench    few models, many items: ChemBench's fit, 22 x 2,854
//	swebench     SWE-bench Verified's fit, 134 models x 500 items
//	lsat7        many respondents, few items: LSAT7's fit, 1,000 x 5
//	synth500x40  500 models x 40 items: θ drawn from SWE-bench's fitted
//	             abilities, (a, d) from its fitted items
//
// Methods: laplace (irtstat.Laplace: the full joint inverse of the observed
// Hessian of the negative log posterior), laplace-exp (the expected
// information), blockdiag (the conditional block-diagonal inverse), and, on
// the first --boot sets of each shape, boot-pct and boot-norm (the
// bootstrap under the prior, models and items resampled, --reps
// replicates: its percentile interval, and est ± z·its SE) and boot-max
// (est ± z·se with se the wider of laplace's and the bootstrap's: what
// jeirt writes for a fit with a prior and a bootstrap). It exits 0
// with a note when the data folder is absent.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtguard"
	"github.com/jeirt/jeirt/train/irtstat"
)

type truth struct {
	theta, a, d []float64
}

type tally struct {
	hit, tot, own int
	width         float64
}

func (t *tally) add(est, lo, hi, want float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return
	}
	t.tot++
	t.width += hi - lo
	if lo <= want && want <= hi {
		t.hit++
	}
	if !(lo <= est && est <= hi) {
		t.own++
	}
}

type errs struct{ ss, n float64 }

func (e *errs) add(est, want float64) {
	if math.IsNaN(est) {
		return
	}
	e.ss += (est - want) * (est - want)
	e.n++
}
func (e errs) rmse() float64 { return math.Sqrt(e.ss / e.n) }

var params = []string{"theta", "a", "d"}
var methods = []string{"laplace", "laplace-exp", "blockdiag", "boot-pct", "boot-norm", "boot-max"}

// prior is the prior every fit of the study runs under (--prior).
var prior = model.DefaultPrior

func main() {
	data := flag.String("data", "", "the shipped data folder (default ../shared/data from the repository root)")
	sets := flag.Int("sets", 50, "simulated data sets per shape")
	boot := flag.Int("boot", 10, "bootstrap the first this many sets of each shape")
	reps := flag.Int("reps", 50, "bootstrap replicates")
	shapes := flag.String("shapes", "chembench,swebench,lsat7,synth500x40", "shapes to run")
	seed := flag.Uint64("seed", 1, "simulation seed")
	priorFlag := flag.String("prior", "default", "the prior of the truths' and the refits' fits (model.ParsePrior)")
	flag.Parse()
	var err error
	if prior, err = model.ParsePrior(*priorFlag); err != nil || !prior.On() {
		fmt.Fprintln(os.Stderr, "coverage: --prior:", err, "(a prior is needed)")
		os.Exit(2)
	}
	if *data == "" {
		*data = filepath.Join("..", "shared", "data")
	}
	if _, err := os.Stat(*data); err != nil {
		fmt.Printf("coverage: no data folder %s: skipped\n", *data)
		return
	}
	ctx := context.Background()
	start := time.Now()
	var sweT *truth
	swe := func() *truth {
		if sweT == nil {
			sweT = fitTruth(ctx, filepath.Join(*data, "swebench-verified", "response_matrix.csv"))
		}
		return sweT
	}
	fmt.Printf("coverage study: %d sets per shape, bootstrap on %d of them (%d replicates), 95%% intervals, default prior %s\n\n",
		*sets, min(*boot, *sets), *reps, prior)
	for _, shape := range strings.Split(*shapes, ",") {
		rng := rand.New(rand.NewPCG(*seed, 7))
		var tr *truth
		base, raw := strings.CutSuffix(shape, "-raw")
		switch base {
		case "chembench":
			full := fitTruth(ctx, filepath.Join(*data, "chembench", "binary_matrix.csv"))
			if full == nil {
				continue
			}
			tr = full
		case "swebench":
			tr = swe()
		case "lsat7":
			tr = fitTruth(ctx, filepath.Join(*data, "lsat", "LSAT7.csv"))
		case "synth500x40":
			s := swe()
			if s == nil {
				continue
			}
			tr = &truth{}
			for i := 0; i < 500; i++ {
				tr.theta = append(tr.theta, s.theta[rng.IntN(len(s.theta))])
			}
			for j := 0; j < 40; j++ {
				k := rng.IntN(len(s.a))
				tr.a, tr.d = append(tr.a, s.a[k]), append(tr.d, s.d[k])
			}
		default:
			fmt.Fprintf(os.Stderr, "coverage: unknown shape %q\n", shape)
			os.Exit(2)
		}
		if tr == nil {
			continue
		}
		if !raw {
			var sc, m float64
			tr, sc, m = priorGauge(tr, prior)
			fmt.Printf("%s: truth put in the prior's gauge: θ' = %.3fθ + %.3f (θ sd %.2f, a mean %.2f)\n", shape, sc, m, sd(tr.theta), mean(tr.a))
		}
		runShape(ctx, shape, tr, rng, *sets, *boot, *reps)
	}
	fmt.Printf("total %.0f s\n", time.Since(start).Seconds())
}

// fitTruth is the default prior's guarded fit of a shipped file, or nil
// (with a note) when the file is absent.
func fitTruth(ctx context.Context, path string) *truth {
	if _, err := os.Stat(path); err != nil {
		fmt.Printf("coverage: %s absent: skipped\n", path)
		return nil
	}
	r, _, err := read.File(path, read.Options{Format: "auto"})
	if err != nil {
		fail(err)
	}
	res, err := irtguard.Guard{CBMM: irt.CBMM{Prior: prior, Accelerate: true}}.Fit(ctx, r)
	if err != nil {
		fail(err)
	}
	f := res.Fit
	fmt.Printf("truth: %s: %d models x %d items; θ sd %.2f, a mean %.2f sd %.2f, d mean %.2f sd %.2f\n",
		path, r.NumModels(), r.NumItems(), sd(f.Theta), mean(f.A), sd(f.A), mean(f.B), sd(f.B))
	return &truth{theta: f.Theta, a: f.A, d: f.B}
}

func simulate(tr *truth, rng *rand.Rand) *model.Responses {
	N, J := len(tr.theta), len(tr.a)
	r := &model.Responses{}
	for i := 0; i < N; i++ {
		r.Models = append(r.Models, fmt.Sprintf("m%d", i))
	}
	for j := 0; j < J; j++ {
		r.Items = append(r.Items, fmt.Sprintf("q%d", j))
	}
	for i := 0; i < N; i++ {
		for j := 0; j < J; j++ {
			y := uint8(0)
			if rng.Float64() < model.Sigmoid(tr.theta[i]*tr.a[j]+tr.d[j]) {
				y = 1
			}
			r.Model, r.Item, r.Label = append(r.Model, int32(i)), append(r.Item, int32(j)), append(r.Label, y)
		}
	}
	return r
}

func runShape(ctx context.Context, shape string, tr *truth, rng *rand.Rand, sets, boots, reps int) {
	began := time.Now()
	N, J := len(tr.theta), len(tr.a)
	cov := map[string]*[3]tally{}
	for _, m := range methods {
		cov[m] = &[3]tally{}
	}
	var rm [2][4]errs // prior default, none (aligned to the truth); θ, a, d, P
	var rmRaw [4]errs // prior none, as fitted (its standard gauge)
	infinite := 0
	joint := 0
	slope, shift := 0.0, 0.0 // of the estimated θ on the true (mean over sets)
	c := irt.CBMM{Prior: prior, Accelerate: true, Tol: 1e-9, MaxIter: 20000}
	for s := 0; s < sets; s++ {
		r := simulate(tr, rng)
		f, err := c.Fit(ctx, r)
		if err != nil {
			fail(err)
		}
		var lap *irtstat.LaplaceResult
		for _, m := range []string{"laplace", "laplace-exp", "blockdiag"} {
			l := irtstat.Laplace{Fitter: c, Expected: m == "laplace-exp"}
			if m == "blockdiag" {
				l.MaxJoint = -1
			}
			res, err := l.Run(r, f)
			if err != nil {
				fail(err)
			}
			if m == "laplace" {
				lap = res
				if res.Joint {
					joint++
				}
			}
			t := cov[m]
			for i := 0; i < N; i++ {
				t[0].add(f.Theta[i], res.ThetaLo[i], res.ThetaHi[i], tr.theta[i])
			}
			for j := 0; j < J; j++ {
				t[1].add(f.A[j], res.ALo[j], res.AHi[j], tr.a[j])
				t[2].add(f.B[j], res.BLo[j], res.BHi[j], tr.d[j])
			}
		}
		if s < boots {
			bs := irtstat.Bootstrap{B: reps, Seed: int64(s + 1), Models: true, Fitter: c}
			b, err := bs.Run(ctx, r, f)
			if err != nil {
				fail(err)
			}
			z := 1.959963984540054
			for i := 0; i < N; i++ {
				cov["boot-pct"][0].add(f.Theta[i], b.ThetaLo[i], b.ThetaHi[i], tr.theta[i])
				cov["boot-norm"][0].add(f.Theta[i], f.Theta[i]-z*b.ThetaSE[i], f.Theta[i]+z*b.ThetaSE[i], tr.theta[i])
			}
			// boot-max: the wider of the curvature's and the bootstrap's
			// se, est ± z·se (what jeirt writes with a prior and a bootstrap).
			wide := func(a, b float64) float64 {
				if math.IsNaN(b) || a > b {
					return a
				}
				return b
			}
			for i := 0; i < N; i++ {
				se := wide(lap.ThetaSE[i], b.ThetaSE[i])
				cov["boot-max"][0].add(f.Theta[i], f.Theta[i]-z*se, f.Theta[i]+z*se, tr.theta[i])
			}
			for j := 0; j < J; j++ {
				se := wide(lap.ASE[j], b.ASE[j])
				cov["boot-max"][1].add(f.A[j], math.Max(0, f.A[j]-z*se), f.A[j]+z*se, tr.a[j])
				se = wide(lap.BSE[j], b.BSE[j])
				cov["boot-max"][2].add(f.B[j], f.B[j]-z*se, f.B[j]+z*se, tr.d[j])
			}
			for j := 0; j < J; j++ {
				cov["boot-pct"][1].add(f.A[j], b.ALo[j], b.AHi[j], tr.a[j])
				cov["boot-norm"][1].add(f.A[j], math.Max(0, f.A[j]-z*b.ASE[j]), f.A[j]+z*b.ASE[j], tr.a[j])
				cov["boot-pct"][2].add(f.B[j], b.BLo[j], b.BHi[j], tr.d[j])
				cov["boot-norm"][2].add(f.B[j], f.B[j]-z*b.BSE[j], f.B[j]+z*b.BSE[j], tr.d[j])
			}
		}
		// Recovery: the default prior's fit as it is (the prior fixes the
		// gauge); prior none's in its standard gauge, and mapped onto the
		// truth's by the affine θ map that fits best (its best case).
		none, err := irt.CBMM{Accelerate: true, Tol: 1e-8, MaxIter: 3000}.Fit(ctx, r)
		if err != nil {
			fail(err)
		}
		recovery(&rm[0], f.Theta, f.A, f.B, tr)
		_, sl, sh := alignedScale(f.Theta, tr.theta)
		slope += sl
		shift += sh
		recovery(&rmRaw, none.Theta, none.A, none.B, tr)
		th, a, d := alignTo(none.Theta, none.A, none.B, tr.theta)
		recovery(&rm[1], th, a, d, tr)
		for j := 0; j < J; j++ {
			if math.Abs(none.B[j]) > 50 || math.Abs(none.A[j]) > 50 {
				infinite++
			}
		}
	}
	fmt.Printf("== %s: %d models x %d items, %d sets (%d bootstrapped), laplace joint on %d; %.0f s\n",
		shape, N, J, sets, min(boots, sets), joint, time.Since(began).Seconds())
	fmt.Printf("%-12s %-6s %9s %8s %10s %12s\n", "method", "param", "coverage", "n", "mean-width", "own-misses")
	for _, m := range methods {
		for k, p := range params {
			t := cov[m][k]
			if t.tot == 0 {
				continue
			}
			fmt.Printf("%-12s %-6s %9.3f %8d %10.3f %12d\n", m, p, float64(t.hit)/float64(t.tot), t.tot, t.width/float64(t.tot), t.own)
		}
	}
	fmt.Printf("RMSE vs truth   %8s %8s %8s %8s\n", "theta", "a", "d", "P")
	for k, name := range []string{"default", "none-aligned", "none-raw"} {
		e := rmRaw
		if k < 2 {
			e = rm[k]
		}
		fmt.Printf("%-15s %8.4g %8.4g %8.4g %8.4f\n", name, e[0].rmse(), e[1].rmse(), e[2].rmse(), e[3].rmse())
	}
	fmt.Printf("default prior: θ̂ ≈ %.3f·θ + %.3f on average (least squares over each set's models)\n", slope/float64(sets), shift/float64(sets))
	fmt.Printf("prior none: %d of %d item estimates beyond |50| (no finite MLE)\n\n", infinite, sets*J)
}

func recovery(e *[4]errs, th, a, d []float64, tr *truth) {
	for i := range tr.theta {
		e[0].add(th[i], tr.theta[i])
	}
	for j := range tr.a {
		e[1].add(a[j], tr.a[j])
		e[2].add(d[j], tr.d[j])
	}
	for i := range tr.theta {
		for j := range tr.a {
			e[3].add(model.Sigmoid(th[i]*a[j]+d[j]), model.Sigmoid(tr.theta[i]*tr.a[j]+tr.d[j]))
		}
	}
}

// alignTo maps a rank-1 fit onto the truth's gauge: θ' = sθ + m by least
// squares on the true θ, a' = a/s, d' = d − a·m/s (θ'a' + d' = θa + d).
func alignTo(th, a, d, want []float64) (th2, a2, d2 []float64) {
	mt, mw := mean(th), mean(want)
	var sxy, sxx float64
	for i := range th {
		sxy += (th[i] - mt) * (want[i] - mw)
		sxx += (th[i] - mt) * (th[i] - mt)
	}
	s := sxy / sxx
	m := mw - s*mt
	th2, a2, d2 = make([]float64, len(th)), make([]float64, len(a)), make([]float64, len(d))
	for i := range th {
		th2[i] = s*th[i] + m
	}
	for j := range a {
		a2[j] = a[j] / s
		d2[j] = d[j] - a[j]*m/s
	}
	return
}

// alignedScale is the least-squares line est ≈ s·want + m.
func alignedScale(est, want []float64) (ok bool, s, m float64) {
	me, mw := mean(est), mean(want)
	var sxy, sxx float64
	for i := range est {
		sxy += (want[i] - mw) * (est[i] - me)
		sxx += (want[i] - mw) * (want[i] - mw)
	}
	s = sxy / sxx
	return true, s, me - s*mw
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sd(v []float64) float64 {
	m, s := mean(v), 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)))
}

// priorGauge is the member of the truth's class of equivalent parameters
// (θ' = sθ + m, a' = a/s, d' = d − a·m/s: the same probabilities, so the
// same data-generating process) that the prior p favours: the one of
// least negative log prior. A MAP fit estimates that member; a fit's own
// parameters already are it (the prior is stationary along the gauge at
// a MAP), so s ≈ 1 and m ≈ 0 there.
func priorGauge(tr *truth, p model.Prior) (*truth, float64, float64) {
	tT, tA, tD := 1/(p.Theta*p.Theta), 1/(p.A*p.A), 1/(p.D*p.D)
	// For a given s the best m solves a linear equation.
	bestM := func(s float64) float64 {
		num, den := 0.0, 0.0
		for _, v := range tr.theta {
			num -= s * v * tT
			den += tT
		}
		for j := range tr.a {
			num += (tr.d[j] - p.DMean) * tr.a[j] / s * tD
			den += tr.a[j] * tr.a[j] / (s * s) * tD
		}
		return num / den
	}
	nlp := func(ls float64) float64 {
		s := math.Exp(ls)
		m := bestM(s)
		v := 0.0
		for _, t := range tr.theta {
			v += (s*t + m) * (s*t + m) * tT
		}
		for j := range tr.a {
			a, d := tr.a[j]/s, tr.d[j]-tr.a[j]*m/s
			v += (a-p.AMean)*(a-p.AMean)*tA + (d-p.DMean)*(d-p.DMean)*tD
		}
		return v / 2
	}
	// Golden-section search on log s.
	lo, hi := -4.0, 4.0
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := nlp(x1), nlp(x2)
	for hi-lo > 1e-10 {
		if f1 < f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = nlp(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = nlp(x2)
		}
	}
	s := math.Exp((lo + hi) / 2)
	m := bestM(s)
	out := &truth{}
	for _, t := range tr.theta {
		out.theta = append(out.theta, s*t+m)
	}
	for j := range tr.a {
		out.a = append(out.a, tr.a[j]/s)
		out.d = append(out.d, tr.d[j]-tr.a[j]*m/s)
	}
	return out, s, m
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coverage:", err)
	os.Exit(1)
}
