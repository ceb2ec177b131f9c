package datarun

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
)

// Import reads responses (evaluation-tool logs, most often: a tree of
// lm-eval, HELM, inspect or Every Eval Ever logs) and writes them as one
// long responses file, CSV or Parquet by Out's extension, with the items'
// texts and categories in ItemsPath(Out).
type Import struct {
	Tree string
	Out  string
	Read read.Options
}

// ItemsPath is the item file written beside the responses out:
// responses.csv gives responses_items.csv.
func ItemsPath(out string) string {
	base := out
	for _, ext := range []string{".csv", ".parquet", ".tsv"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	return base + "_items.csv"
}

// ImportSidecars lists the items file written beside out (cli.Outputs).
func ImportSidecars(out string) []string { return []string{ItemsPath(out)} }

// Run reads Tree, writes Out and its items file, and prints what it read.
func (s Import) Run(ctx context.Context, w io.Writer) error {
	if s.Out == "" {
		return fmt.Errorf("data import: --out is required (a .csv or .parquet file)")
	}
	defer fileio.SetInputContext(ctx)()
	r, rep, err := read.File(s.Tree, s.Read)
	if err != nil {
		if werr := WriteFound(w, rep); werr != nil {
			return werr
		}
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := Summarize(r, rep).WriteText(w); err != nil {
		return err
	}
	items := ItemsPath(s.Out)
	switch strings.ToLower(filepath.Ext(s.Out)) {
	case ".parquet":
		err = read.WriteLongParquet(s.Out, r)
	case ".csv":
		err = read.WriteLongCSV(s.Out, r)
	default:
		return fmt.Errorf("--out %s: want a .csv or .parquet file", s.Out)
	}
	if err != nil {
		return err
	}
	if err := read.WriteItemsCSV(items, r); err != nil {
		return err
	}
	if _, err = fmt.Fprintf(w, "wrote %s (%d cells of %d models on %d items) and %s (id, text, category)\n", s.Out, r.Len(), len(r.Models), len(r.Items), items); err != nil {
		return err
	}
	if r.Successes != nil {
		_, err = fmt.Fprintf(w, "some cells are graded scores or trials: the columns of %s say so, and it reads back as written (no --graded needed)\n", s.Out)
	}
	return err
}
