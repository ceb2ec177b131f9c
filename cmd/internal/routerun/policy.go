package routerun

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/route"
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
	Rule string // the rule's spec (min-p?p=0.7 for the min-p rule)
	Why  string // where it comes from
}

// NewRouter builds the router of checkpoint ck that o describes, checking
// every option against the checkpoint (errors name the flag). The models
// are ranked (best-single, the shortlist, the margin's default model, the
// fallback of out-of-domain queries) by their accuracy on o.Train, else
// by the training accuracies the checkpoint recorded, else by their mean
// predicted P.
func NewRouter(ck *checkpoint.Checkpoint, o RouterOptions) (*route.Router, RuleNote, error) {
	ref, err := reference(ck, o.Train, o.TrainRead)
	if err != nil {
		return nil, RuleNote{}, err
	}
	flagRule := o.Margin != 0 || o.Shortlist != 0 || o.MinPSet || o.Lambda != 0 || o.Default != ""
	if o.Rule != "" && flagRule {
		return nil, RuleNote{}, model.FieldErrorf("Rule", "route: {Rule} %s names the rule; drop {Margin}, {Shortlist}, {MinP}, {Lambda} and {Default}", o.Rule)
	}
	var rt *route.Router
	var note RuleNote
	if o.Rule != "" || !flagRule && o.Costs == "" {
		rt, note, err = ruleRouter(ck, o, ref)
	} else {
		rt, note, err = flagRouter(ck, o, ref)
	}
	if err != nil {
		return nil, RuleNote{}, err
	}
	if err := setDomain(ck, rt, o.KeepOutOfDomain); err != nil {
		return nil, RuleNote{}, err
	}
	return rt, note, nil
}

// reference ranks the checkpoint's models: by accuracy on trainPath when
// given, else as route.Reference says.
func reference(ck *checkpoint.Checkpoint, trainPath string, ro read.Options) ([]float64, error) {
	if trainPath != "" {
		return TrainReference(ck.Model, trainPath, ro)
	}
	return route.Reference(ck), nil
}

// ruleRouter is the router of --rule, or of the checkpoint's recorded
// default rule when o.Rule is "" or "default".
func ruleRouter(ck *checkpoint.Checkpoint, o RouterOptions, ref []float64) (*route.Router, RuleNote, error) {
	var rule route.Rule
	var note RuleNote
	rec := ck.Manifest.Routing
	switch {
	case (o.Rule == "" || o.Rule == "default") && rec == nil:
		rule = route.Rule{Name: route.RuleMaxP, Param: math.NaN()}
		note.Why = "the checkpoint records no default rule (written by a jeirt before one was chosen at training): the highest P, as then"
	case o.Rule == "" || o.Rule == "default":
		rule = route.Recorded(rec)
		note.Why = "the checkpoint's default rule: " + rec.Why
	default:
		var err error
		if rule, err = route.ParseRule(o.Rule); err != nil {
			return nil, RuleNote{}, model.FieldErrorf("Rule", "route: {Rule}: %v (or default: the checkpoint's)", err)
		}
		note.Why = "given by --rule"
	}
	note.Rule = rule.String()
	if o.Train != "" && (rule.Name == route.RuleMaxP || rule.Name == route.RuleLambda) && rec == nil {
		return nil, RuleNote{}, model.FieldErrorf("Train", "route: {Train} ranks the models for {Margin}, {Shortlist} or a recorded default rule; the checkpoint records none, so it needs {Margin} or {Shortlist}")
	}
	rt, err := baseRouter(ck, o.Models, o.Costs, 0, 0, false)
	if err != nil {
		return nil, RuleNote{}, err
	}
	if rule.Name == route.RuleLambda && rt.Costs == nil {
		rt.Costs = route.RecordedCosts(ck)
		if rt.Costs == nil {
			return nil, RuleNote{}, model.FieldErrorf("Costs", "route: rule %s weighs cost; give the prices with {Costs}", rule)
		}
		for _, i := range rt.Candidates {
			if math.IsNaN(rt.Costs[i]) {
				return nil, RuleNote{}, model.FieldErrorf("Costs", "route: the checkpoint records no price for model %q (give {Costs}, or choose the models with {Models})", ck.Model.Models[i])
			}
		}
	}
	if err := rule.Apply(rt, ref); err != nil {
		return nil, RuleNote{}, err
	}
	return rt, note, nil
}

// flagRouter is the router the rule flags describe (--costs, --min-p,
// --lambda, --margin, --shortlist, --default).
func flagRouter(ck *checkpoint.Checkpoint, o RouterOptions, ref []float64) (*route.Router, RuleNote, error) {
	rt, err := baseRouter(ck, o.Models, o.Costs, o.MinP, o.Lambda, o.MinPSet)
	if err != nil {
		return nil, RuleNote{}, err
	}
	if err := setReference(ck, rt, ref, o.Margin, o.Shortlist, o.Default, o.Train, o.Costs); err != nil {
		return nil, RuleNote{}, err
	}
	rt.Best = route.BestSingle(ref, rt.Candidates)
	var spec string
	switch rt.Rule() {
	case "min-p":
		spec = fmt.Sprintf("min-p?p=%g", rt.MinP)
	case "lambda":
		spec = route.Rule{Name: route.RuleLambda, Param: rt.Lambda}.String()
	case "margin":
		spec = route.Rule{Name: route.RuleMargin, Param: rt.Margin}.String() + " (default model " + ck.Model.Models[rt.Default] + ")"
	default:
		spec = route.RuleMaxP
	}
	if o.Shortlist > 0 {
		spec += fmt.Sprintf(" among the %d best models", o.Shortlist)
	}
	return rt, RuleNote{Rule: spec, Why: "given by the flags"}, nil
}

// setDomain gives rt the checkpoint's out-of-domain reference (none for a
// checkpoint written before jeirt kept one); such queries go to rt.Best.
func setDomain(ck *checkpoint.Checkpoint, rt *route.Router, keep bool) error {
	dom, err := checkpoint.LoadDomain(ck.Dir)
	if err != nil {
		return err
	}
	if dom == nil {
		return nil
	}
	if dom.Dim != ck.Model.InputDim {
		return fmt.Errorf("%s: the out-of-domain reference has width %d, the encoder %d", ck.Dir, dom.Dim, ck.Model.InputDim)
	}
	rt.Domain, rt.KeepOutOfDomain = dom, keep
	return nil
}

// baseRouter checks --models, --costs, --min-p and --lambda against the checkpoint.
func baseRouter(ck *checkpoint.Checkpoint, models []string, costsPath string, minP, lambda float64, minPSet bool) (*route.Router, error) {
	m := ck.Model
	rt := &route.Router{Model: m, MinP: minP, Lambda: lambda, Calibration: route.CalibrationOf(ck)}
	if models == nil {
		for i := range m.Models {
			rt.Candidates = append(rt.Candidates, i)
		}
	} else {
		seen := map[int]bool{}
		for _, name := range models {
			i := indexOfName(m.Models, name)
			if i < 0 {
				return nil, model.FieldErrorf("Models", "route: {Models}: %q is not a model of the checkpoint (it has %d: %s)",
					name, m.NumModels(), ShortList(m.Models, 5))
			}
			if !seen[i] {
				seen[i] = true
				rt.Candidates = append(rt.Candidates, i)
			}
		}
		if len(rt.Candidates) == 0 {
			return nil, model.FieldErrorf("Models", "route: {Models} names no model")
		}
	}
	if costsPath == "" {
		if lambda != 0 {
			return nil, model.FieldErrorf("Lambda", "route: {Lambda} weighs cost; it needs {Costs}")
		}
		if minPSet {
			return nil, model.FieldErrorf("MinP", "route: {MinP} picks the cheapest good-enough model; it needs {Costs}")
		}
	} else {
		costs, err := route.ReadCosts(costsPath, m.Models)
		if err != nil {
			return nil, err
		}
		for _, i := range rt.Candidates {
			if math.IsNaN(costs[i]) {
				return nil, model.FieldErrorf("Costs", "%s: no cost for model %q (price every model routed to, or choose them with {Models})", costsPath, m.Models[i])
			}
		}
		rt.Costs = costs
	}
	if err := rt.Check(); err != nil {
		return nil, err
	}
	return rt, nil
}

// setReference applies the rules that rank models by the reference score
// ref: --shortlist keeps rt's T best candidates, and --margin sets δ and
// the default model (--default, else the best candidate).
func setReference(ck *checkpoint.Checkpoint, rt *route.Router, ref []float64, margin float64, shortlist int, defaultName, trainPath, costsPath string) error {
	if shortlist < 0 {
		return model.FieldErrorf("Shortlist", "route: {Shortlist} %d must not be negative", shortlist)
	}
	if defaultName != "" && margin == 0 {
		return model.FieldErrorf("Default", "route: {Default} is the default model of the margin rule; it needs {Margin}")
	}
	if margin == 0 && shortlist == 0 {
		if trainPath != "" {
			return model.FieldErrorf("Train", "route: {Train} ranks the models for {Margin}, {Shortlist} or the checkpoint's default rule, not for {Costs} alone")
		}
		return nil
	}
	if !(margin >= 0) {
		return model.FieldErrorf("Margin", "route: {Margin} %v must be a non-negative number (or inf)", margin)
	}
	if margin > 0 && costsPath != "" {
		return model.FieldErrorf("Margin", "route: {Margin} does not weigh cost; use it without {Costs}")
	}
	if defaultName != "" && trainPath != "" {
		return model.FieldErrorf("Default", "route: give {Default} or {Train}, not both")
	}
	m := ck.Model
	if shortlist > 0 {
		rt.Candidates = route.Shortlist(ref, rt.Candidates, shortlist)
	}
	if margin == 0 {
		return rt.Check()
	}
	rt.Margin = margin
	if defaultName != "" {
		rt.Default = indexOfName(m.Models, defaultName)
		if rt.Default < 0 {
			return model.FieldErrorf("Default", "route: {Default}: %q is not a model of the checkpoint (it has %d: %s)", defaultName, m.NumModels(), ShortList(m.Models, 5))
		}
		if !slices.Contains(rt.Candidates, rt.Default) {
			return model.FieldErrorf("Default", "route: {Default}: %q is not one of the candidates ({Models}, {Shortlist})", defaultName)
		}
		return rt.Check()
	}
	rt.Default = route.BestSingle(ref, rt.Candidates)
	return rt.Check()
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
func WriteChoices(w io.Writer, format string, m *model.JEIRT, rt *route.Router, qs []route.Query, choices []route.Choice, top int) error {
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
				Fallback     bool   `json:"fallback,omitempty"`
				OutOfDomain  bool   `json:"out_of_domain"`
				Alternatives []alt  `json:"alternatives"`
			}{qs[k].ID, mk(c.ModelP), c.Rule, c.Fallback, c.OutOfDomain, alts}
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
