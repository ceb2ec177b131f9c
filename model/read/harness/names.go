package harness

import (
	"fmt"

	"github.com/jeirt/jeirt/model/csvtable"
	"github.com/jeirt/jeirt/model/limits"
)

// ReadModelNames reads a CSV of model names to map, with the columns from
// (a name as a log gives it) and to (the name to use): two tools' names of
// one model (openai/gpt2 and gpt2) become one model only when mapped.
func ReadModelNames(path string) (map[string]string, error) {
	out := map[string]string{}
	err := csvtable.Read(path, func(get csvtable.Row) error {
		from, to := get.Str("from"), get.Str("to")
		if err := get.Err(); err != nil {
			return err
		}
		if from == "" || to == "" {
			return fmt.Errorf("%s: an empty name (want from,to: the name in the logs, the name to use)", path)
		}
		if prev, ok := out[from]; ok && prev != to {
			return fmt.Errorf("%s: %q is mapped twice, to %q and %q", path, limits.Clip(from), limits.Clip(prev), limits.Clip(to))
		}
		out[from] = to
		return nil
	})
	return out, err
}
