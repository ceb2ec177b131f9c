package irtrun

import (
	"fmt"
	"io"

	"github.com/jeirt/jeirt/train/irtstat"
)

// writeNested prints the nested comparisons of res under the table.
func writeNested(w io.Writer, res *irtstat.CVResult) {
	if len(res.Nested) == 0 {
		return
	}
	fmt.Fprintln(w, "nested models (held-out log loss per answer, larger minus smaller; negative: the larger predicts better):")
	for _, n := range res.Nested {
		fmt.Fprintf(w, "  %s\n", n)
	}
}
