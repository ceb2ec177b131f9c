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
type RouterOptions struct {
	Models    []string // candidates (nil: every model of the checkpoint)
	Costs     string   // model,cost CSV
	MinP      float64  // with Costs: the cheapest model with at least this P wins
	MinPSet   bool     // MinP was given (it needs Costs)
	Lambda    float64  // with Costs: the highest P − λ·cost wins instead
	Margin    float64  // without Costs: leave Default only for a model whose P beats it by this
	Shortlist int      // choose among the T best candidates by the reference
	Default   string   // with Margin: the default model (else the best by the reference)
	Train     string   // responses whose accuracies are the reference (else the mean predicted P)
	TrainRead read.Options
	// KeepOutOfDomain keeps the rule's choice for a query unlike every
	// training question (it is still flagged); by default such a query goes
	// to the candidate with the highest mean predicted P.
	KeepOutOfDomain bool
}

// NewRouter builds the router of checkpoint ck that o describes, checking
// every option against the checkpoint (errors are model.FieldErrors on the
// fields of RouterOptions).
func NewRouter(ck *checkpoint.Checkpoint, o RouterOptions) (*route.Router, error) {
	rt, err := baseRouter(ck, o.Models, o.Costs, o.MinP, o.Lambda, o.MinPSet)
	if err != nil {
		return nil, err
	}
	if err := setReference(ck, rt, o.Margin, o.Shortlist, o.Default, o.Train, o.TrainRead, o.Costs); err != nil {
		return nil, err
	}
	if err := setDomain(ck, rt, o.KeepOutOfDomain); err != nil {
		return nil, err
	}
	return rt, nil
}

// setDomain gives rt the checkpoint's out-of-domain reference (none for a
// checkpoint written before jeirt kept one) and, as the model for
// out-of-domain queries, the candidate with the highest mean predicted P.
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
	rt.Best = route.BestSingle(route.MeanPredictedP(ck.Model), rt.Candidates)
	return nil
}

// baseRouter checks Models, Costs, MinP and Lambda against the checkpoint.
func baseRouter(ck *checkpoint.Checkpoint, models []string, costsPath string, minP, lambda float64, minPSet bool) (*route.Router, error) {
	m := ck.Model
	rt := &route.Router{Model: m, MinP: minP, Lambda: lambda}
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

// setReference applies the rules that rank models by a reference score (the
// accuracy on the Train responses, else the highest mean predicted P over
// the checkpoint's questions): Shortlist keeps rt's T best candidates, and
// Margin sets δ and the default model (Default, else the best candidate).
func setReference(ck *checkpoint.Checkpoint, rt *route.Router, margin float64, shortlist int, defaultName, trainPath string, trainRO read.Options, costsPath string) error {
	if shortlist < 0 {
		return model.FieldErrorf("Shortlist", "route: {Shortlist} %d must not be negative", shortlist)
	}
	if defaultName != "" && margin == 0 {
		return model.FieldErrorf("Default", "route: {Default} is the default model of the margin rule; it needs {Margin}")
	}
	if margin == 0 && shortlist == 0 {
		if trainPath != "" {
			return model.FieldErrorf("Train", "route: {Train} ranks the models for {Margin} or {Shortlist}; it needs one of them")
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
	ref := route.MeanPredictedP(m)
	if trainPath != "" {
		var err error
		if ref, err = TrainReference(m, trainPath, trainRO); err != nil {
			return err
		}
	}
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
	if tr.ItemGroup == nil {
		return nil, nil
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
	return out, nil
}

// MarginNote describes the margin rule for the summary line.
func MarginNote(m *model.JEIRT, rt *route.Router) string {
	if rt.Rule() != "margin" {
		return ""
	}
	return fmt.Sprintf(" (default %s, margin %g)", m.Models[rt.Default], rt.Margin)
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
