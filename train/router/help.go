package router

import (
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/train/route"
)

// FlagHelp says what the parameter of the rule named flag does, for the
// flag of that name that sets it (--min-p, --lambda, --margin, --shortlist;
// "" for a rule without one).
func FlagHelp(flag string) string {
	for _, r := range route.Rules() {
		if r.Name == flag {
			return r.Help
		}
	}
	return ""
}

// SpecHelp lists the rules as a spec names them, for the flag that takes
// one: "best-single, max-p, shortlist?k=3, ... or lambda?lambda=0.01 (with
// costs)", each parameter at its default or, where it must be given, its
// example.
func SpecHelp() string {
	var specs []string
	for _, r := range route.Rules() {
		s := r.Name
		if r.Key != "" {
			v := r.Example
			if v == "" {
				v = strconv.FormatFloat(r.Def, 'g', -1, 64)
			}
			s += "?" + r.Key + "=" + v
		}
		if r.Costs {
			s += " (with costs)"
		}
		specs = append(specs, s)
	}
	return strings.Join(specs[:len(specs)-1], ", ") + " or " + specs[len(specs)-1]
}
