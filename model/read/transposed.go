package read

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
)

// modelLike matches names that read as model names: a leaderboard's
// date-prefixed submission (20240620_sweagent_claude3.5sonnet), a model
// family, a parameter count (7b, 70B) or an instruction-tuned suffix.
var modelLike = regexp.MustCompile(`(?i)(^(19|20)\d{6}_)|gpt|claude|llama|qwen|mistral|mixtral|gemini|gemma|deepseek|phi-?\d|falcon|vicuna|` +
	`(^|[^a-z])o[134]([^a-z0-9]|$)|(^|[^a-z])yi-|command-r|sonnet|opus|haiku|(^|[^a-z0-9])\d+(\.\d+)?b([^a-z]|$)|-instruct|-chat`)

// transposedWarning is the warning for a wide file whose header made the
// reader take rows as models (its first column is named like models) but
// which looks like one row per item: more "models" than "items", and most
// "item" names read as model names; nil when it does not look so. The
// setting it suggests is the field Format, for each caller to name.
func transposedWarning(path string, r *model.Responses, rep *Report) *model.FieldError {
	if rep.Format != "wide" || rep.Why == "given by --format" || r.NumModels() <= r.NumItems() || r.NumItems() < 2 {
		return nil
	}
	var like []string
	n := 0
	for _, name := range r.Items {
		if modelLike.MatchString(name) {
			n++
			if len(like) < 3 {
				like = append(like, fmt.Sprintf("%q", limits.Clip(name)))
			}
		}
	}
	if 2*n < r.NumItems() {
		return nil
	}
	return model.FieldErrorf("Format", "%s: read as %d models x %d items (one row per model), but it has more models than items and %d of its %d item names look like model names (%s): if each row is an item, read it with {Format} wide-items",
		path, r.NumModels(), r.NumItems(), n, r.NumItems(), strings.Join(like, ", "))
}
