package analyze

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
)

func shares(s []Share) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, x.Category+":"+strconv.FormatFloat(x.Value, 'f', 3, 64))
	}
	return strings.Join(parts, " ")
}

// WriteCSV writes rows as CSV.
func WriteCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

var ff = model.FormatFloat

// WriteClusters writes clusters.csv: cluster, size, its most frequent
// categories (name:share) and its nearest categories (name:cosine), then a
// last row "all" with the ARI and NMI.
func (res *DirectionsResult) WriteClusters(w io.Writer) error {
	rows := [][]string{{"cluster", "size", "top_categories", "nearest_categories", "ari", "nmi"}}
	for k, c := range res.Clusters {
		rows = append(rows, []string{strconv.Itoa(k), strconv.Itoa(c.Size), shares(c.Top), shares(c.Nearest), "", ""})
	}
	rows = append(rows, []string{"all", strconv.Itoa(len(res.Assign)), "", "", ff(res.ARI), ff(res.NMI)})
	return WriteCSV(w, rows)
}

// WriteAssignments writes item,category,cluster.
func (res *DirectionsResult) WriteAssignments(w io.Writer, items, category []string) error {
	rows := [][]string{{"item", "category", "cluster"}}
	for j, id := range items {
		rows = append(rows, []string{id, category[j], strconv.Itoa(res.Assign[j])})
	}
	return WriteCSV(w, rows)
}

// Write writes probe.csv: model, projection, accuracy on A, on B.
func (res *ProbeResult) Write(w io.Writer) error {
	rows := [][]string{{"model", "projection", "accuracy_" + res.A, "accuracy_" + res.B}}
	for _, m := range res.Models {
		rows = append(rows, []string{m.Name, ff(m.Projection), ff(m.AccA), ff(m.AccB)})
	}
	return WriteCSV(w, rows)
}

// WriteItems writes icc_items.csv: item, a, d, the free slope and its z, the
// largest drop and its z, and the flags (space-separated).
func (res *ICCResult) WriteItems(w io.Writer) error {
	rows := [][]string{{"item", "a", "d", "free_slope", "free_slope_z", "max_drop", "max_drop_z", "flags"}}
	for _, it := range res.Items {
		rows = append(rows, []string{it.ID, ff(it.A), ff(it.D), ff(it.Slope), ff(it.SlopeZ), ff(it.MaxDrop), ff(it.DropZ), strings.Join(it.Flags, " ")})
	}
	return WriteCSV(w, rows)
}

// WriteCurves writes icc_curves.csv in long form: item, bin, theta (the
// bin's median ability), n, empirical and fitted proportion correct.
func (res *ICCResult) WriteCurves(w io.Writer) error {
	rows := [][]string{{"item", "bin", "theta", "n", "empirical", "fitted"}}
	for _, it := range res.Items {
		for k := range it.N {
			rows = append(rows, []string{it.ID, strconv.Itoa(k + 1), ff(res.Mid[k]), strconv.Itoa(it.N[k]), ff(it.Empirical[k]), ff(it.Fitted[k])})
		}
	}
	return WriteCSV(w, rows)
}
