package serve

import (
	"fmt"
	"net/http"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/train/route"
)

// usesDefault reports whether p asks for the checkpoint's recorded default
// rule: rule "default", or no rule and none of a rule's settings.
func (p RouteParams) usesDefault() bool {
	return p.Rule == "default" || p.Rule == "" && p.MinP == nil && p.Lambda == nil && p.Margin == nil && p.Shortlist == 0 && p.Default == ""
}

// routerLine says which rule plain "router" applies and why, as serve logs
// it at start and on reload.
func (st *state) routerLine() string {
	rec := st.ck.Manifest.Routing
	if rec == nil {
		return `"router" applies max-p (with --costs, min-p 0.7): the checkpoint records no default rule (written by a jeirt before one was chosen at training)`
	}
	rule, err := route.Recorded(rec) // checked at load
	if err != nil {
		return fmt.Sprintf(`"router": %v`, err)
	}
	return fmt.Sprintf(`"router" applies the checkpoint's default rule %s: %s`, rule, rec.Why)
}

// RouterInfo is the body of GET /v1/router: the rule "router" applies, why,
// the figures it was chosen on and the out-of-domain check.
type RouterInfo struct {
	// Rule is the default rule's spec (shortlist?k=3), as router:<rule>
	// names it.
	Rule string `json:"rule"`
	// Recorded is false for a checkpoint written before jeirt recorded a
	// default rule (router then routes by the highest P).
	Recorded bool `json:"recorded"`
	*checkpoint.Routing
	// Domain is the out-of-domain check in use (domain.safetensors), absent
	// when the checkpoint keeps none.
	Domain *checkpoint.OutOfDomain `json:"domain,omitempty"`
}

// router is GET /v1/router.
func (s *Server) router(w http.ResponseWriter, r *http.Request) error {
	st := s.cur.Load()
	info := RouterInfo{Rule: route.RuleMaxP}
	if rec := st.ck.Manifest.Routing; rec != nil {
		rule, err := route.Recorded(rec) // checked at load
		if err != nil {
			return err
		}
		info.Rule, info.Recorded, info.Routing = rule.String(), true, rec
	}
	if d := st.domain; d != nil {
		info.Domain = &checkpoint.OutOfDomain{FalseFlagRate: d.FalseFlagRate, Threshold: d.Threshold, Calibration: d.Calibration, Reference: d.NumReference()}
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}
