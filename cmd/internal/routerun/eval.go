package routerun

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
	"github.com/jeirt/jeirt/train/router"
)

// EvalRun is jeirt route eval: it scores the router on held-out responses
// against the reference policies (RouteEval), with intervals, and writes
// the cost-quality curve. With a Checkpoint it scores that checkpoint on
// Data; with Splits it makes Splits item splits of Data itself, trains a
// checkpoint on each (Config) and scores it on the split's test questions.
type EvalRun struct {
	Checkpoint, Encoder string
	Data                string       // held-out responses (with Splits: all responses, split here)
	Read                read.Options // how Data and Val are read
	Costs               string       // model,cost CSV
	Train               string       // training responses: best single model by accuracy
	TrainRead           read.Options
	Val                 string // other held-out responses, to choose the margin δ
	Out                 string // CSV of the curve ("" or "-": the CSV on w)
	MinP, Lambda        []float64
	Margins             []float64
	Shortlists          []int
	// Foreign is a queries file of text from outside the benchmark (one
	// query per line, or JSONL): route eval reports how many of them the
	// out-of-domain check flags.
	Foreign string

	// Splits > 0 runs that many item splits of Data (seeds Seed, Seed+1,
	// ...; SplitVal and SplitTest of the questions held out), each trained
	// with the training config Config ("" the defaults; its data, split and
	// output are the split's) and the overrides Set, on Device.
	Splits              int
	Seed                int64
	SplitVal, SplitTest float64
	Config              string
	Set                 []string
	Device              string

	Log progress.Logf
}

// Run scores the router and writes the curve: as CSV on w, or to Out with a
// summary table and a "wrote" line on w.
func (e EvalRun) Run(ctx context.Context, w io.Writer) error {
	if e.Splits > 0 {
		return e.runSplits(ctx, w)
	}
	if e.Checkpoint == "" {
		return model.FieldErrorf("Checkpoint", "route eval: give {Checkpoint} (a trained router to score on {Data}) or {Splits} K (split {Data}, train and score K times)")
	}
	log := e.Log
	ck, err := checkpoint.Open(e.Checkpoint, e.Encoder, log)
	if err != nil {
		return err
	}
	r, _, err := read.File(e.Data, e.Read)
	if err != nil {
		return err
	}
	opt, err := e.options(ck.Model.Models)
	if err != nil {
		return err
	}
	opt.Reference = router.Reference(ck)
	opt.Calibration = router.CalibrationOf(ck)
	if e.Train != "" {
		if opt.Reference, err = TrainReference(ck.Model, e.Train, e.TrainRead); err != nil {
			return err
		}
		if opt.BenchmarkReference, err = TrainBenchmarkReference(ck.Model, e.Train, e.TrainRead); err != nil {
			return err
		}
	}
	var unknown []string
	for _, name := range r.Models {
		if !slices.Contains(ck.Model.Models, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 && len(unknown) < r.NumModels() {
		log.Printf("route eval: %d models of %s are not in the checkpoint and are ignored (%s)",
			len(unknown), e.Data, ShortList(unknown, 3))
	}
	q, newItems, newX, err := jeirt.Questions(ctx, ck, r, nil, log)
	if err != nil {
		return err
	}
	dom, err := checkpoint.LoadDomain(ck.Dir)
	if err != nil {
		return err
	}
	if dom != nil {
		x, err := itemVectors(ctx, ck, r, newItems, newX)
		if err != nil {
			return err
		}
		flags, rate := domainFlags(dom, x)
		opt.OutOfDomain = flags
		if rate.n > 0 {
			log.Printf("route eval: the out-of-domain check flags %s of the %d held-out questions; its stated false-flag rate is %.1f%% (%s)",
				rate, rate.n, 100*dom.FalseFlagRate, DomainNote(dom))
		}
	}
	if rec := ck.Manifest.Routing; rec != nil {
		rule, costs, err := recordedDefault(ck, opt.Costs, opt.Reference)
		if err != nil {
			return fmt.Errorf("route eval: %w", err)
		}
		opt.Default, opt.Costs = &rule, costs
		log.Printf("route eval: the checkpoint's default rule is %s (%s); it is the row router,default,%s", rule, rec.Why, rule)
	} else {
		log.Printf("route eval: the checkpoint records no default rule (written before jeirt chose one): no router,default row")
	}
	if e.Val != "" {
		if err := e.tuneMargin(ctx, ck, &opt); err != nil {
			return err
		}
	}
	pts, err := route.RouteEval(ck.Model, r, q, opt)
	if err != nil {
		return err
	}
	route.Intervals(pts)
	if e.Foreign != "" && dom != nil {
		enc, err := jeirt.OpenCheckpointEncoder(ck)
		if err != nil {
			return err
		}
		xf, n, err := foreignVectors(ctx, enc, e.Foreign)
		if err != nil {
			return err
		}
		_, rate := domainFlags(dom, xf)
		log.Printf("route eval: the out-of-domain check flags %s of the %d foreign queries of %s", rate, n, e.Foreign)
	}
	return e.write(w, pts, 1)
}

// options are the sweeps and costs of the flags, for a checkpoint with
// these models.
func (e EvalRun) options(models []string) (route.RouteEvalOptions, error) {
	opt := route.RouteEvalOptions{MinP: e.MinP, Lambda: e.Lambda, Margins: e.Margins, Shortlists: e.Shortlists, Outcomes: true}
	if e.Costs != "" {
		var err error
		if opt.Costs, err = routefile.ReadCosts(e.Costs, models); err != nil {
			return opt, err
		}
	} else if len(e.MinP) > 0 || len(e.Lambda) > 0 {
		return opt, model.FieldErrorf("Costs", "route eval: {MinP} and {Lambda} sweeps need {Costs}")
	}
	return opt, nil
}

// write writes the curve of pts (over splits splits): as CSV on w when Out
// is "" or "-", else to Out with the table on w.
func (e EvalRun) write(w io.Writer, pts []route.RoutePoint, splits int) error {
	if e.Out == "" || e.Out == "-" {
		return route.WriteRouteCSV(w, pts)
	}
	if err := fileio.WriteFileAtomic(e.Out, func(w io.Writer) error { return route.WriteRouteCSV(w, pts) }); err != nil {
		return err
	}
	WriteSummary(w, pts, splits)
	fmt.Fprintf(w, "wrote %s (%d rows)\n", e.Out, len(pts))
	return nil
}

// itemVectors is the encoder vector of every item of r (nil for an item
// without text that the encoder cannot look up by id): the vectors
// jeirt.Questions made for the items new to the checkpoint (newItems,
// newX), and the others encoded here.
func itemVectors(ctx context.Context, ck *checkpoint.Checkpoint, r *model.Responses, newItems []int, newX [][]float32) ([][]float32, error) {
	x := make([][]float32, r.NumItems())
	for k, j := range newItems {
		x[j] = newX[k]
	}
	var ids, texts []string
	var rows []int
	for j := range x {
		if x[j] != nil {
			continue
		}
		text := ""
		if r.ItemText != nil {
			text = r.ItemText[j]
		}
		rows, ids, texts = append(rows, j), append(ids, r.Items[j]), append(texts, text)
	}
	if len(rows) == 0 {
		return x, nil
	}
	enc, err := jeirt.OpenCheckpointEncoder(ck)
	if err != nil {
		return nil, err
	}
	if _, byID := enc.(encoder.ItemEncoder); !byID {
		keep := 0
		for k := range rows {
			if strings.TrimSpace(texts[k]) != "" {
				rows[keep], ids[keep], texts[keep] = rows[k], ids[k], texts[k]
				keep++
			}
		}
		rows, ids, texts = rows[:keep], ids[:keep], texts[:keep]
	}
	vecs, err := encoder.EncodeItems(ctx, enc, ids, texts, encoder.ItemOptions{})
	if err != nil {
		return nil, err
	}
	for k, j := range rows {
		x[j] = vecs[k]
	}
	return x, nil
}

// foreignVectors encodes the queries of a queries file.
func foreignVectors(ctx context.Context, enc encoder.Encoder, path string) ([][]float32, int, error) {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	qf, err := routefile.ReadQueries(path, f)
	if err != nil {
		return nil, 0, err
	}
	if len(qf.Queries) == 0 {
		return nil, 0, model.FieldErrorf("Foreign", "route eval: {Foreign} %s has no queries", path)
	}
	ids, texts := make([]string, len(qf.Queries)), make([]string, len(qf.Queries))
	for k, q := range qf.Queries {
		ids[k], texts[k] = q.ID, q.Text
	}
	x, err := encoder.EncodeItems(ctx, enc, ids, texts, encoder.ItemOptions{})
	return x, len(x), err
}

// share is k of n with a 95% Wilson score interval.
type share struct{ k, n int }

func (s share) rate() float64 { return float64(s.k) / float64(s.n) }

// String is "6 (6.0%, 95% interval 2.8-12.5%)".
func (s share) String() string {
	if s.n == 0 {
		return "none"
	}
	lo, hi := wilson(s.k, s.n)
	return fmt.Sprintf("%d (%.1f%%, 95%% interval %.1f-%.1f%%)", s.k, 100*s.rate(), 100*lo, 100*hi)
}

// wilson is the 95% Wilson score interval of k successes in n trials.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	p, nn := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*nn)) / (1 + z*z/nn)
	h := z / (1 + z*z/nn) * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn))
	return math.Max(0, c-h), math.Min(1, c+h)
}

// domainFlags checks every vector of x (nil: not checked) against dom.
func domainFlags(dom *checkpoint.Domain, x [][]float32) ([]bool, share) {
	flags := make([]bool, len(x))
	var s share
	for j, v := range x {
		if v == nil {
			continue
		}
		s.n++
		if flags[j] = dom.OutOfDomain(v); flags[j] {
			s.k++
		}
	}
	return flags, s
}

// tuneMargin scores the margin sweep on the validation responses e.Val and
// sets opt.TunedMargin to the δ with the best accuracy there.
func (e EvalRun) tuneMargin(ctx context.Context, ck *checkpoint.Checkpoint, opt *route.RouteEvalOptions) error {
	v, _, err := read.File(e.Val, e.Read)
	if err != nil {
		return err
	}
	q, _, _, err := jeirt.Questions(ctx, ck, v, nil, e.Log)
	if err != nil {
		return err
	}
	delta, note, err := tuneMargin(ck.Model, v, q, *opt)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Val, err)
	}
	opt.TunedMargin = &delta
	e.Log.Printf("route eval: margin δ = %g chosen on %s %s", delta, e.Val, note)
	return nil
}

// tuneMargin is the margin δ with the best accuracy on the validation
// responses v (question embeddings q) and a note of the figures there.
func tuneMargin(m *model.JEIRT, v *model.Responses, q [][]float32, opt route.RouteEvalOptions) (float64, string, error) {
	vopt := opt
	vopt.MinP, vopt.Lambda, vopt.Costs, vopt.Default, vopt.OutOfDomain, vopt.Outcomes = []float64{}, []float64{}, nil, nil, nil, false
	pts, err := route.RouteEval(m, v, q, vopt)
	if err != nil {
		return 0, "", err
	}
	delta, err := route.TuneMargin(pts)
	if err != nil {
		return 0, "", err
	}
	var best, maxP, tuned route.RoutePoint
	for _, p := range pts {
		switch {
		case p.Rule == "best-single":
			best = p
		case p.Rule == "max-p":
			maxP = p
		case p.Rule == "margin" && p.Param == delta:
			tuned = p
		}
	}
	return delta, fmt.Sprintf("(%d questions): accuracy there %.4f, best single %.4f, max-p %.4f", tuned.Items, tuned.Accuracy, best.Accuracy, maxP.Accuracy), nil
}

// WriteSummary prints the curve as a table: every point's accuracy with its
// standard error, mean cost, difference from best-single in points with a
// 95% interval, and the splits it won and lost against best-single. splits
// is the number of item splits the points are the mean of (1: the
// intervals are over one split's questions).
func WriteSummary(w io.Writer, pts []route.RoutePoint, splits int) {
	if splits > 1 {
		fmt.Fprintf(w, "mean over %d item splits; ± is the corrected resampled standard error (Nadeau and Bengio); vs best: minus best-single, in points, with a 95%% interval (Student's t, %d degrees of freedom); W/L: splits won and lost against best-single\n", splits, splits-1)
	} else {
		fmt.Fprintln(w, "one split; ± is the standard error over its questions; vs best: minus best-single, in points, with a 95% interval of the paired differences")
	}
	fmt.Fprintf(w, "%-18s %-12s %-16s %8s %7s %9s %8s %17s %5s %6s\n", "policy", "rule", "param", "accuracy", "± se", "mean cost", "vs best", "95% interval", "W/L", "items")
	for _, p := range pts {
		param, cost := p.Spec, ""
		if param == "" && !math.IsNaN(p.Param) {
			param = strconv.FormatFloat(p.Param, 'g', 4, 64)
		}
		if strings.Contains(param, "|") {
			param = "varies (CSV)" // several rules or δ over the splits: listed in the curve
		}
		if !math.IsNaN(p.MeanCost) {
			cost = strconv.FormatFloat(p.MeanCost, 'f', 4, 64)
		}
		se, vs, ci, wl := "", "", "", ""
		if !math.IsNaN(p.AccuracySE) {
			se = fmt.Sprintf("%.4f", p.AccuracySE)
		}
		if p.Policy != "best-single" && !math.IsNaN(p.VsBest) {
			h := route.HalfWidth95(p.VsBestSE, splits)
			vs = fmt.Sprintf("%+.2f", 100*p.VsBest)
			ci = fmt.Sprintf("(%+.2f, %+.2f)", 100*(p.VsBest-h), 100*(p.VsBest+h))
			wl = fmt.Sprintf("%d/%d", p.Wins, p.Losses)
		}
		fmt.Fprintf(w, "%-18s %-12s %-16s %8.4f %7s %9s %8s %17s %5s %6d\n", p.Policy, p.Rule, param, p.Accuracy, se, cost, vs, ci, wl, p.Items)
	}
}

// recordedDefault is the checkpoint's recorded default rule as router.Build
// makes it a router (the row router,default of route eval), and the prices
// route eval then scores every rule with: costs, else, for a default rule
// that weighs cost, the checkpoint's recorded ones.
func recordedDefault(ck *checkpoint.Checkpoint, costs, ref []float64) (route.Rule, []float64, error) {
	rt, _, err := router.Build(ck, router.Request{Spec: route.RuleDefault, Costs: costs, RecordedCosts: true, PricedOnly: true, Reference: ref})
	if err != nil {
		return route.Rule{}, nil, err
	}
	if costs == nil {
		costs = rt.Costs
	}
	return rt.Requested(), costs, nil
}
