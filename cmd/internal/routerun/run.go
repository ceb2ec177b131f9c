package routerun

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// Run is jeirt route: it routes every query of a queries file with a
// checkpoint and prints the choices. The zero value needs Checkpoint.
type Run struct {
	Checkpoint string // checkpoint folder
	Encoder    string // encoder override ("": the recorded one)
	Router     RouterOptions
	Print      string // table (default), csv or json (JSON lines)
	Top        int    // alternatives listed per query
	Log        model.Logf
}

// Route reads the queries from in (name "-": standard input, else the
// file), routes them and writes the choices to w; notes and the summary go
// to Log.
func (o Run) Route(ctx context.Context, name string, in io.Reader, w io.Writer) error {
	if o.Print == "" {
		o.Print = "table"
	}
	if o.Print != "table" && o.Print != "csv" && o.Print != "json" {
		return model.FieldErrorf("Print", "route: {Print} %q: want table, csv or json", o.Print)
	}
	if o.Top < 0 {
		return model.FieldErrorf("Top", "route: {Top} %d must not be negative", o.Top)
	}
	log := o.Log
	start := time.Now()
	ck, err := checkpoint.Open(o.Checkpoint, o.Encoder, log)
	if err != nil {
		return err
	}
	rt, err := NewRouter(ck, o.Router)
	if err != nil {
		return err
	}
	enc, err := jeirt.OpenCheckpointEncoder(ck)
	if err != nil {
		return err
	}
	loaded := time.Now()
	if name == "-" {
		name = "stdin"
	} else {
		f, err := fileio.OpenInput(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	qf, err := route.ReadQueries(name, in)
	if err != nil {
		return err
	}
	if len(qf.Empty) > 0 {
		log.Printf("route: skipped %s in %s (%s)", plural(len(qf.Empty), "empty line", "empty lines"), name, lineList(qf.Empty, 10))
	}
	if len(qf.Queries) == 0 {
		return fmt.Errorf("route: %s has no queries", name)
	}
	ids, texts := make([]string, len(qf.Queries)), make([]string, len(qf.Queries))
	for k, q := range qf.Queries {
		ids[k], texts[k] = q.ID, q.Text
	}
	emb, x, err := jeirt.EncodeQuestions(ctx, ck, enc, ids, texts)
	if err != nil {
		return fmt.Errorf("route: %w", err)
	}
	choices := make([]route.Choice, len(emb))
	fallbacks, ood := 0, 0
	for k := range emb {
		choices[k] = rt.RouteChecked(emb[k], x[k])
		for _, mp := range choices[k].Ranked { // the embeddings are checked; this is the last guard
			if !model.Finite(mp.P) {
				return fmt.Errorf("route: %s: P(correct) of model %q for query %q is %v", ck.Where(), ck.Model.Models[mp.Model], ids[k], mp.P)
			}
		}
		if choices[k].Fallback {
			fallbacks++
		}
		if choices[k].OutOfDomain {
			ood++
		}
	}
	if err := WriteChoices(w, o.Print, ck.Model, rt, qf.Queries, choices, o.Top); err != nil {
		return err
	}
	if fallbacks > 0 {
		log.Printf("route: %d of %d queries had no model with P >= %g; each went to its highest-P model instead", fallbacks, len(choices), rt.MinP)
	}
	switch {
	case rt.Domain == nil:
		log.Printf("route: the checkpoint keeps no out-of-domain reference (written by an older jeirt): queries are not checked")
	case ood > 0 && rt.KeepOutOfDomain:
		log.Printf("route: %d of %d queries are out of domain (farther from every training question than %.0f%% of training questions are from their nearest neighbour); the rule's choice is kept", ood, len(choices), 100*rt.Domain.Quantile)
	case ood > 0:
		log.Printf("route: %d of %d queries are out of domain (farther from every training question than %.0f%% of training questions are from their nearest neighbour); sent to the best single model, %s (--keep-out-of-domain keeps the rule's choice)", ood, len(choices), 100*rt.Domain.Quantile, ck.Model.Models[rt.Best])
	}
	log.Printf("route: %d queries, %d models, rule %s%s; load %.1f ms, encode+route %.2f ms",
		len(choices), len(rt.Candidates), rt.Rule(), MarginNote(ck.Model, rt), ms(loaded.Sub(start)), ms(time.Since(loaded)))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// lineList renders up to limit line numbers: "lines 3, 7 and 12 more".
func lineList(lines []int, limit int) string {
	var b strings.Builder
	b.WriteString(map[bool]string{true: "line ", false: "lines "}[len(lines) == 1])
	for k, l := range lines {
		if k == limit {
			fmt.Fprintf(&b, " and %d more", len(lines)-limit)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

// EvalRun is jeirt route eval: it scores the router on held-out responses
// against the reference policies (RouteEval) and writes the cost-quality
// curve. The zero value needs Checkpoint and Data.
type EvalRun struct {
	Checkpoint, Encoder string
	Data                string       // held-out responses
	Read                read.Options // how Data and Val are read
	Costs               string       // model,cost CSV
	Train               string       // training responses: best single model by accuracy
	TrainRead           read.Options
	Val                 string // other held-out responses, to choose the margin δ
	Out                 string // CSV of the curve ("" or "-": the CSV on w)
	MinP, Lambda        []float64
	Margins             []float64
	Shortlists          []int
	Log                 model.Logf
}

// Run scores the router and writes the curve: as CSV on w, or to Out with a
// summary table and a "wrote" line on w.
func (e EvalRun) Run(ctx context.Context, w io.Writer) error {
	log := e.Log
	ck, err := checkpoint.Open(e.Checkpoint, e.Encoder, log)
	if err != nil {
		return err
	}
	r, _, err := read.File(e.Data, e.Read)
	if err != nil {
		return err
	}
	opt := route.RouteEvalOptions{MinP: e.MinP, Lambda: e.Lambda, Margins: e.Margins, Shortlists: e.Shortlists}
	if e.Costs != "" {
		if opt.Costs, err = route.ReadCosts(e.Costs, ck.Model.Models); err != nil {
			return err
		}
	} else if len(e.MinP) > 0 || len(e.Lambda) > 0 {
		return model.FieldErrorf("Costs", "route eval: {MinP} and {Lambda} sweeps need {Costs}")
	}
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
	q, _, newX, err := jeirt.Questions(ctx, ck, r, nil, log)
	if err != nil {
		return err
	}
	if err := e.domainRate(ck, newX); err != nil {
		return err
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
	if e.Out == "" || e.Out == "-" {
		return route.WriteRouteCSV(w, pts)
	}
	if err := fileio.WriteFileAtomic(e.Out, func(w io.Writer) error { return route.WriteRouteCSV(w, pts) }); err != nil {
		return err
	}
	WriteSummary(w, pts)
	fmt.Fprintf(w, "wrote %s (%d rows)\n", e.Out, len(pts))
	return nil
}

// domainRate logs how many of the questions new to the checkpoint (their
// encoder vectors x, from jeirt.Questions) jeirt route would flag as out of
// domain.
func (e EvalRun) domainRate(ck *checkpoint.Checkpoint, x [][]float32) error {
	dom, err := checkpoint.LoadDomain(ck.Dir)
	if err != nil || dom == nil || len(x) == 0 {
		return err
	}
	ood := 0
	for _, v := range x {
		if dom.OutOfDomain(v) {
			ood++
		}
	}
	e.Log.Printf("route eval: %d of %d questions new to the checkpoint (%.1f%%) are out of domain; jeirt route sends such queries to the best single model",
		ood, len(x), 100*float64(ood)/float64(len(x)))
	return nil
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
	vopt := *opt
	vopt.MinP, vopt.Lambda, vopt.Costs = []float64{}, []float64{}, nil
	pts, err := route.RouteEval(ck.Model, v, q, vopt)
	if err != nil {
		return fmt.Errorf("%s: %w", e.Val, err)
	}
	delta, err := route.TuneMargin(pts)
	if err != nil {
		return err
	}
	opt.TunedMargin = &delta
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
	e.Log.Printf("route eval: margin δ = %g chosen on %s (%d questions): accuracy there %.4f, best single %.4f, max-p %.4f",
		delta, e.Val, tuned.Items, tuned.Accuracy, best.Accuracy, maxP.Accuracy)
	return nil
}

// WriteSummary prints the curve as a table: policy, rule, parameter,
// accuracy, mean cost and items of every point.
func WriteSummary(w io.Writer, pts []route.RoutePoint) {
	fmt.Fprintf(w, "%-18s %-18s %8s %9s %12s %6s\n", "policy", "rule", "param", "accuracy", "mean cost", "items")
	for _, p := range pts {
		param, cost := "", ""
		if !math.IsNaN(p.Param) {
			param = strconv.FormatFloat(p.Param, 'g', 4, 64)
		}
		if !math.IsNaN(p.MeanCost) {
			cost = strconv.FormatFloat(p.MeanCost, 'f', 4, 64)
		}
		fmt.Fprintf(w, "%-18s %-18s %8s %9.4f %12s %6d\n", p.Policy, p.Rule, param, p.Accuracy, cost, p.Items)
	}
}
