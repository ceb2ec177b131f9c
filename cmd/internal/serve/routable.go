package serve

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/suggest"
)

// checkRoutable is the start-up check of a server with upstreams: plain
// "router" must have a model to send a chat to, a model of the checkpoint
// with an upstream (and a cost, when the rule weighs cost). Otherwise every
// routed chat would fail, so the server refuses to start, with the
// checkpoint's names, the upstreams file's names and the closest matches.
// Upstream names the checkpoint does not know (which a chat can still name
// directly) are logged with the closest checkpoint model.
func (s *Server) checkRoutable(st *state) error {
	ckNames := st.model().Models
	var upNames, unknown []string
	for name := range s.upstreams {
		upNames = append(upNames, name)
		if _, ok := st.index[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(upNames)
	slices.Sort(unknown)
	p, _, _ := ParseRouterModel(RouterModel)
	_, err := st.Router(p, s.hasUpstream)
	if err == nil {
		for _, name := range unknown {
			s.set.Log.Printf("serve: warning: upstream %q of %s is not a model of the checkpoint (closest: %q): chats can name it, the router never chooses it",
				name, s.set.Upstreams, suggest.Closest(name, ckNames))
		}
		return nil
	}
	var b strings.Builder
	if len(unknown) == len(upNames) {
		fmt.Fprintf(&b, "serve: no model of the checkpoint %s has an upstream in %s, so \"router\" could send a chat nowhere; the upstreams' names must be the checkpoint's model names", st.dir, s.set.Upstreams)
	} else {
		var priced []string
		for i, name := range ckNames {
			if !math.IsNaN(st.cost(i)) {
				priced = append(priced, name)
			}
		}
		fmt.Fprintf(&b, "serve: \"router\" could send a chat nowhere: %v", err)
		if st.costs != nil {
			fmt.Fprintf(&b, "\n  models with a cost in %s (%d): %s", s.set.Costs, len(priced), strings.Join(priced, ", "))
		}
	}
	fmt.Fprintf(&b, "\n  models of the checkpoint (%d): %s", len(ckNames), strings.Join(ckNames, ", "))
	fmt.Fprintf(&b, "\n  names in %s (%d): %s", s.set.Upstreams, len(upNames), strings.Join(upNames, ", "))
	if len(unknown) > 0 {
		var close []string
		for _, name := range unknown {
			close = append(close, fmt.Sprintf("%s -> %s", name, suggest.Closest(name, ckNames)))
		}
		fmt.Fprintf(&b, "\n  closest checkpoint model to each unknown upstream name: %s", strings.Join(close, ", "))
	}
	return fmt.Errorf("%s", b.String())
}
