package analyze

import (
	"fmt"
	"io"
	"strings"

	"github.com/jeirt/jeirt/model"
)

func shareText(s []Share) string {
	var p []string
	for _, x := range s {
		p = append(p, fmt.Sprintf("%s (%.3f)", x.Category, x.Value))
	}
	return strings.Join(p, ", ")
}

// Summary writes the clustering in words: ARI, NMI and each cluster's
// nearest categories.
func (res *DirectionsResult) Summary(w io.Writer) {
	fmt.Fprintf(w, "%d items, k = %d: ARI %.4f, NMI %.4f against the categories\n", len(res.Assign), res.K, model.Float(res.ARI), model.Float(res.NMI))
	for k, cl := range res.Clusters {
		fmt.Fprintf(w, "  cluster %2d (%4d items): nearest %s\n", k, cl.Size, shareText(cl.Nearest))
	}
}
