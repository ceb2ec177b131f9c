package analyze

import (
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// Group rules of DeriveGroups.
const (
	// RuleTextBracket takes a leading "[name]" of the item text (RewardBench
	// prefixes each prompt with its subset: "[alpacaeval-easy] ...").
	RuleTextBracket = "text-bracket"
	// RuleIDStem drops a trailing "_123" or "-123" from the item id
	// ("azerbaijani_biology_17" -> "azerbaijani_biology").
	RuleIDStem = "id-stem"
	// RuleIDFirst keeps the id up to its first "_", "-", "/" or ":"
	// ("azerbaijani_biology_17" -> "azerbaijani").
	RuleIDFirst = "id-first"
)

// DeriveGroups names a group for every item from its id and text by rule
// (RuleTextBracket, RuleIDStem or RuleIDFirst); "" where the rule finds none.
// text may be nil.
func DeriveGroups(ids, text []string, rule string) ([]string, error) {
	out := make([]string, len(ids))
	for j, id := range ids {
		switch rule {
		case RuleTextBracket:
			if text == nil {
				return nil, model.FieldErrorf("Items", "group rule %s needs item texts ({Items})", rule)
			}
			t := strings.TrimLeft(text[j], " \t\r\n")
			if k := strings.Index(t, "]"); strings.HasPrefix(t, "[") && k > 1 && k < 80 {
				out[j] = strings.TrimSpace(t[1:k])
			}
		case RuleIDStem:
			s := id
			if k := strings.LastIndexAny(s, "_-"); k > 0 && strings.Trim(s[k+1:], "0123456789") == "" && k+1 < len(s) {
				s = s[:k]
			}
			out[j] = s
		case RuleIDFirst:
			if k := strings.IndexAny(id, "_-/:"); k > 0 {
				out[j] = id[:k]
			}
		default:
			return nil, fmt.Errorf("group rule %q: want %s, %s or %s", rule, RuleTextBracket, RuleIDStem, RuleIDFirst)
		}
	}
	return out, nil
}
