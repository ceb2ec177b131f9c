package routerun

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/routefile"
	"github.com/jeirt/jeirt/train/route"
	"github.com/jeirt/jeirt/train/router"
)

// RouterOptions are the flags of jeirt route that choose the routing rule.
// Without any of Rule, Margin, Shortlist, Costs, MinP, Lambda and Default,
// the router applies the checkpoint's recorded default rule.
type RouterOptions struct {
	// Rule is "default" (the checkpoint's recorded rule) or a rule's spec
	// (best-single, max-p, shortlist?k=3, margin?delta=0.05,
	// lambda?lambda=0.1); "" lets the other flags decide.
	Rule      string
	Models    []string // candidates (nil: every model of the checkpoint)
	Costs     string   // model,cost CSV
	MinP      float64  // with Costs: the cheapest model with at least this P wins
	MinPSet   bool     // MinP was given (it needs Costs)
	Lambda    float64  // with Costs: the highest P − λ·cost wins instead
	Margin    float64  // without Costs: leave Default only for a model whose P beats it by this
	Shortlist int      // choose among the T best candidates by the reference
	Default   string   // with Margin: the default model (else the best by the reference)
	Train     string   // responses whose accuracies are the reference (else the recorded training accuracies)
	TrainRead read.Options
	// KeepOutOfDomain keeps the rule's choice for a query unlike every
	// training question (it is still flagged); by default such a query goes
	// to the rule's fallback, the best single model.
	KeepOutOfDomain bool
}

// RuleNote says which rule a router applies and why: the line jeirt route
// prints.
type RuleNote struct {
	Rule string // the spec of the rule applied (route.Rule.String, the margin's default model named)
	Why  string // where it comes from
}

// NewRouter builds the router of checkpoint ck that o describes with
// router.Build, checking every option against the checkpoint (errors name
// the flag): the rule of --rule, of the rule flags, or the checkpoint's
// recorded default. The models are ranked (best-single, the shortlist, the
// margin's default model, the fallback of out-of-domain queries) by their
// accuracy on o.Train, else by the training accuracies the checkpoint
// recorded, else by their mean predicted P.
func NewRouter(ck *checkpoint.Checkpoint, o RouterOptions) (*route.Router, RuleNote, error) {
	ref, err := reference(ck, o.Train, o.TrainRead)
	if err != nil {
		return nil, RuleNote{}, err
	}
	flagged := o.Margin != 0 || o.Shortlist != 0 || o.MinPSet || o.Lambda != 0 || o.Default != ""
	if o.Rule != "" && flagged {
		return nil, RuleNote{}, model.FieldErrorf("Rule", "route: {Rule} %s names the rule; drop {Margin}, {Shortlist}, {MinP}, {Lambda} and {Default}", o.Rule)
	}
	req := router.Request{Spec: o.Rule, Models: o.Models, Reference: ref, RecordedCosts: true, KeepOutOfDomain: o.KeepOutOfDomain}
	if o.Costs != "" { // --costs, checked whatever the rule
		cand, err := candidates(ck.Model, o.Models)
		if err != nil {
			return nil, RuleNote{}, err
		}
		if req.Costs, err = readCosts(ck.Model, o.Costs, cand); err != nil {
			return nil, RuleNote{}, err
		}
	}
	why := "given by --rule"
	if o.Rule == "" && (flagged || o.Costs != "") {
		if req.Name, req.Param, err = flagRule(o); err != nil {
			return nil, RuleNote{}, err
		}
		req.Among, req.Default, why = o.Shortlist, o.Default, "given by the flags"
	}
	if req.Domain, err = domain(ck); err != nil {
		return nil, RuleNote{}, err
	}
	rt, built, err := router.Build(ck, req)
	if err != nil {
		return nil, RuleNote{}, fmt.Errorf("route: %w", err)
	}
	if built != "given" {
		why = built
	}
	if o.Train != "" && req.Name == "" && !ranks(rt.Applied()) && ck.Manifest.Routing == nil {
		return nil, RuleNote{}, model.FieldErrorf("Train", "route: {Train} ranks the models for {Margin}, {Shortlist} or a recorded default rule; the checkpoint records none, so it needs {Margin} or {Shortlist}")
	}
	return rt, RuleNote{Rule: rt.Rule(), Why: why}, nil
}

// ranks reports whether the rule orders the models by the reference (so
// that --data has something to rank).
func ranks(r route.Rule) bool {
	return r.Among > 0 || r.Name == route.RuleBestSingle || r.Name == route.RuleShortlist || r.Name == route.RuleMargin
}

// reference ranks the checkpoint's models: by accuracy on trainPath when
// given, else as router.Reference says.
func reference(ck *checkpoint.Checkpoint, trainPath string, ro read.Options) ([]float64, error) {
	if trainPath != "" {
		return TrainReference(ck.Model, trainPath, ro)
	}
	return router.Reference(ck), nil
}

// flagRule is the rule the rule flags name, for router.Build to check:
// --costs with --lambda (λ) or --min-p (the cheapest good-enough model),
// --margin (inf: best-single) with --default, --shortlist alone or among
// the models of another rule.
func flagRule(o RouterOptions) (string, *float64, error) {
	if o.Default != "" && o.Margin == 0 {
		return "", nil, model.FieldErrorf("Default", "route: {Default} is the default model of the margin rule; it needs {Margin}")
	}
	if o.Costs == "" {
		if o.Lambda != 0 {
			return "", nil, model.FieldErrorf("Lambda", "route: {Lambda} weighs cost; it needs {Costs}")
		}
		if o.MinPSet {
			return "", nil, model.FieldErrorf("MinP", "route: {MinP} picks the cheapest good-enough model; it needs {Costs}")
		}
	}
	if o.Margin == 0 && o.Shortlist == 0 && o.Train != "" {
		return "", nil, model.FieldErrorf("Train", "route: {Train} ranks the models for {Margin}, {Shortlist} or the checkpoint's default rule, not for {Costs} alone")
	}
	if !(o.Margin >= 0) { // before inf is read as best-single
		return "", nil, model.FieldErrorf("Margin", "route: {Margin} %v must be a non-negative number (or inf)", o.Margin)
	}
	if o.Margin > 0 && o.Costs != "" {
		return "", nil, model.FieldErrorf("Margin", "route: {Margin} does not weigh cost; use it without {Costs}")
	}
	if o.Default != "" && o.Train != "" {
		return "", nil, model.FieldErrorf("Default", "route: give {Default} or {Train}, not both")
	}
	switch {
	case o.Costs != "" && o.Lambda != 0:
		return route.RuleLambda, &o.Lambda, nil
	case o.Costs != "":
		return route.RuleMinP, &o.MinP, nil
	case math.IsInf(o.Margin, 1) && o.Default != "":
		return "", nil, model.FieldErrorf("Default", "route: {Margin} inf with {Default} %s always takes %s: choose it with {Models} %s", o.Default, o.Default, o.Default)
	case math.IsInf(o.Margin, 1):
		return route.RuleBestSingle, nil, nil
	case o.Margin > 0:
		return route.RuleMargin, &o.Margin, nil
	}
	return route.RuleMaxP, nil, nil
}

// domain is the checkpoint's out-of-domain reference (nil for a checkpoint
// written before jeirt kept one).
func domain(ck *checkpoint.Checkpoint) (*checkpoint.Domain, error) {
	dom, err := checkpoint.LoadDomain(ck.Dir)
	if err != nil || dom == nil {
		return nil, err
	}
	if dom.Dim != ck.Model.InputDim {
		return nil, fmt.Errorf("%s: the out-of-domain reference has width %d, the encoder %d", ck.Dir, dom.Dim, ck.Model.InputDim)
	}
	return dom, nil
}

// candidates are the rows of M that --models names (all without it).
func candidates(m *model.JEIRT, models []string) ([]int, error) {
	var out []int
	if models == nil {
		for i := range m.Models {
			out = append(out, i)
		}
		return out, nil
	}
	seen := map[int]bool{}
	for _, name := range models {
		i := indexOfName(m.Models, name)
		if i < 0 {
			return nil, model.FieldErrorf("Models", "route: {Models}: %q is not a model of the checkpoint (it has %d: %s)",
				name, m.NumModels(), ShortList(m.Models, 5))
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return nil, model.FieldErrorf("Models", "route: {Models} names no model")
	}
	return out, nil
}

// readCosts reads --costs and checks that it prices every candidate.
func readCosts(m *model.JEIRT, path string, cand []int) ([]float64, error) {
	costs, err := routefile.ReadCosts(path, m.Models)
	if err != nil {
		return nil, err
	}
	for _, i := range cand {
		if math.IsNaN(costs[i]) {
			return nil, model.FieldErrorf("Costs", "%s: no cost for model %q (price every model routed to, or choose them with {Models})", path, m.Models[i])
		}
	}
	return costs, nil
}

// TrainReference returns each checkpoint model's accuracy on the responses
// in path (−Inf for a model without any).
func TrainReference(m *model.JEIRT, path string, ro read.Options) ([]float64, error) {
	tr, _, err := read.File(path, ro)
	if err != nil {
		return nil, err
	}
	ref := make([]float64, m.NumModels())
	acc := tr.ModelAccuracy()
	for i := range ref {
		ref[i] = math.Inf(-1)
		if k := tr.ModelIndex(m.Models[i]); k >= 0 && !math.IsNaN(acc[k]) {
			ref[i] = acc[k]
		}
	}
	return ref, nil
}

// TrainBenchmarkReference returns, for each benchmark (item group) of the
// responses in path, each checkpoint model's accuracy on that benchmark's
// items (−Inf for a model without any): the reference of the
// per-benchmark-best policy. It returns nil when the items have no groups
// (give ro.Items a file with a category or benchmark column).
func TrainBenchmarkReference(m *model.JEIRT, path string, ro read.Options) (map[string][]float64, error) {
	tr, _, err := read.File(path, ro)
	if err != nil {
		return nil, err
	}
	return BenchmarkReference(m, tr), nil
}

// BenchmarkReference is TrainBenchmarkReference of responses in memory.
func BenchmarkReference(m *model.JEIRT, tr *model.Responses) map[string][]float64 {
	if tr.ItemGroup == nil {
		return nil
	}
	right, seen := map[string][]float64{}, map[string][]float64{}
	for c := range tr.Label {
		g := tr.ItemGroup[tr.Item[c]]
		if g == "" {
			continue
		}
		if right[g] == nil {
			right[g], seen[g] = make([]float64, tr.NumModels()), make([]float64, tr.NumModels())
		}
		right[g][tr.Model[c]] += tr.SuccessesAt(c) // successes over trials with several trials per cell
		seen[g][tr.Model[c]] += float64(tr.TrialsAt(c))
	}
	out := map[string][]float64{}
	for g := range right {
		ref := make([]float64, m.NumModels())
		for i := range ref {
			ref[i] = math.Inf(-1)
			if k := tr.ModelIndex(m.Models[i]); k >= 0 && seen[g][k] > 0 {
				ref[i] = right[g][k] / seen[g][k]
			}
		}
		out[g] = ref
	}
	return out
}

func indexOfName(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// ShortList joins up to limit names, and says how many more there are.
func ShortList(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-limit)
}

// WriteChoices writes the routing of queries qs in format table, csv or json
// (JSON lines), with up to top alternatives each.
func WriteChoices(w io.Writer, format string, m *model.JEIRT, rt *route.Router, qs []routefile.Query, choices []route.Choice, top int) error {
	costStr := func(c float64) string {
		if math.IsNaN(c) {
			return ""
		}
		return strconv.FormatFloat(c, 'g', 6, 64)
	}
	switch format {
	case "json":
		type alt struct {
			Model string   `json:"model"`
			P     float64  `json:"p"`
			Cost  *float64 `json:"cost,omitempty"`
		}
		enc := json.NewEncoder(w)
		for k, c := range choices {
			mk := func(mp route.ModelP) alt {
				a := alt{Model: m.Models[mp.Model], P: mp.P}
				if !math.IsNaN(mp.Cost) {
					v := mp.Cost
					a.Cost = &v
				}
				return a
			}
			alts := []alt{}
			for _, a := range c.Alternatives(top) {
				alts = append(alts, mk(a))
			}
			rec := struct {
				ID string `json:"id"`
				alt
				Rule         string `json:"rule"`
				Reason       string `json:"reason"`
				Fallback     bool   `json:"fallback,omitempty"`
				OutOfDomain  bool   `json:"out_of_domain"`
				Alternatives []alt  `json:"alternatives"`
			}{qs[k].ID, mk(c.ModelP), c.Rule, c.Reason, c.Fallback, c.OutOfDomain, alts}
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"id", "model", "p", "cost", "fallback", "out_of_domain"}
		for t := 1; t <= top; t++ {
			head = append(head, fmt.Sprintf("alt_%d", t), fmt.Sprintf("p_%d", t))
		}
		cw.Write(head)
		for k, c := range choices {
			row := []string{qs[k].ID, m.Models[c.Model], strconv.FormatFloat(c.P, 'f', 4, 64), costStr(c.Cost), strconv.FormatBool(c.Fallback), strconv.FormatBool(c.OutOfDomain)}
			alts := c.Alternatives(top)
			for t := 0; t < top; t++ {
				if t < len(alts) {
					row = append(row, m.Models[alts[t].Model], strconv.FormatFloat(alts[t].P, 'f', 4, 64))
				} else {
					row = append(row, "", "")
				}
			}
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	}
	idW, mW := 2, 5
	for k, c := range choices {
		idW = max(idW, len(qs[k].ID))
		mW = max(mW, len(m.Models[c.Model]))
	}
	withCost := rt.Costs != nil
	head := fmt.Sprintf("%-*s  %-*s  %6s", idW, "id", mW, "model", "P")
	if withCost {
		head += fmt.Sprintf("  %10s", "cost")
	}
	if top > 0 {
		head += "  alternatives (P)"
	}
	fmt.Fprintln(w, head)
	for k, c := range choices {
		line := fmt.Sprintf("%-*s  %-*s  %6.4f", idW, qs[k].ID, mW, m.Models[c.Model], c.P)
		if withCost {
			line += fmt.Sprintf("  %10s", costStr(c.Cost))
		}
		var alts []string
		for _, a := range c.Alternatives(top) {
			alts = append(alts, fmt.Sprintf("%s %.4f", m.Models[a.Model], a.P))
		}
		if top > 0 {
			line += "  " + strings.Join(alts, ", ")
		}
		if c.Fallback {
			line += "  (fallback: none reached min-p)"
		}
		if c.OutOfDomain {
			line += "  (out of domain)"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
