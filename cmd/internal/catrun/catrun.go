// Package catrun runs jeirt irt cat and jeirt add-model --fit end to end:
// read a fit folder and answers, run adaptive tests (train/cat) or place
// models from their answers, write the folder of package model/catfile or
// rows of the fit's abilities.csv, and the lines the commands print.
package catrun

import (
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
)

// modelSeed is the Random rule's seed for a model: the run's seed and the
// model's name, so a model's draw does not depend on the others.
func modelSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, name)
	return h.Sum64() ^ uint64(seed)
}

// checkOut refuses an existing output unless force.
func checkOut(out string, force bool) error {
	if out == "" {
		return nil
	}
	// The output rule's own check: an empty folder counts as absent.
	_, err := fileio.CheckOutput(fileio.Output{Path: out, Folder: true, Force: force})
	return err
}

// sortedKeys lists a count map as "a 3, b 1".
func sortedKeys(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
