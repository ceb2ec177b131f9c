package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// WriteDir writes a simulation into dir: responses.csv (long), synth.json (the
// options and the jeirt version), the true parameters (truth_models.csv,
// truth_items.csv; for jeirt also items.csv, features.npy, truth_q.csv and
// truth_m.csv), each file atomically.
func WriteDir(dir string, opt Options, r *model.Responses, t *Truth, version string) error {
	if err := read.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		return err
	}
	if err := fileio.WriteFileAtomic(filepath.Join(dir, "synth.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(manifest{Kind: opt.Kind, Guess: opt.Guess, Trials: opt.Trials, Levels: opt.Levels, Models: opt.Models, Items: opt.Items, Rank: t.Rank,
			Missing: opt.Missing, Seed: opt.Seed, FeatureDim: opt.FeatureDim, EmbedDim: opt.EmbedDim,
			Observed: r.Len(), MeanCorrect: r.MeanCorrect(), Version: version})
	}); err != nil {
		return err
	}
	if t.Theta != nil {
		k := t.Rank
		if err := writeTable(filepath.Join(dir, "truth_models.csv"), "model", r.Models,
			colNames("theta", k), func(i, c int) float64 { return t.Theta[i*k+c] }); err != nil {
			return err
		}
		cols := append(colNames("a", k), "b")
		if t.C != nil {
			cols = append(cols, "c")
		}
		if err := writeTable(filepath.Join(dir, "truth_items.csv"), "item", r.Items, cols, func(j, c int) float64 {
			switch c {
			case k:
				return t.B[j]
			case k + 1:
				return t.C[j]
			}
			return t.A[j*k+c]
		}); err != nil {
			return err
		}
	}
	if t.Features != nil {
		if err := read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
			return err
		}
		if err := tensorfile.WriteNPY(filepath.Join(dir, "features.npy"), t.Features, len(t.Features[0])); err != nil {
			return err
		}
		d := len(t.Q[0])
		if err := writeTable(filepath.Join(dir, "truth_q.csv"), "item", r.Items, colNames("q", d),
			func(j, c int) float64 { return t.Q[j][c] }); err != nil {
			return err
		}
		if err := writeTable(filepath.Join(dir, "truth_m.csv"), "model", r.Models, colNames("m", d),
			func(i, c int) float64 { return t.M[i][c] }); err != nil {
			return err
		}
	}
	return nil
}

type manifest struct {
	Kind        string  `json:"kind"`
	Models      int     `json:"models"`
	Items       int     `json:"items"`
	Rank        int     `json:"rank,omitempty"`
	Missing     float64 `json:"missing"`
	Seed        int64   `json:"seed"`
	FeatureDim  int     `json:"feature_dim,omitempty"`
	EmbedDim    int     `json:"embed_dim,omitempty"`
	Guess       float64 `json:"guess,omitempty"`
	Trials      int     `json:"trials,omitempty"`
	Levels      int     `json:"levels,omitempty"`
	Observed    int     `json:"observed"`
	MeanCorrect float64 `json:"mean_correct"`
	Version     string  `json:"jeirt_version"`
}

func colNames(prefix string, k int) []string {
	out := make([]string, k)
	for c := range out {
		out[c] = fmt.Sprintf("%s_%d", prefix, c+1)
	}
	return out
}

// writeTable writes name,col_1,...,col_k rows with values in shortest
// round-trip form, so the same numbers always give the same bytes.
func writeTable(path, first string, names, cols []string, value func(row, col int) float64) error {
	return fileio.WriteFileAtomic(path, func(w io.Writer) error {
		bw := w.(*bufio.Writer)
		bw.WriteString(first)
		for _, c := range cols {
			bw.WriteByte(',')
			bw.WriteString(c)
		}
		bw.WriteByte('\n')
		var buf []byte
		for i, n := range names {
			bw.WriteString(n)
			for c := range cols {
				buf = strconv.AppendFloat(buf[:0], value(i, c), 'g', -1, 64)
				bw.WriteByte(',')
				bw.Write(buf)
			}
			bw.WriteByte('\n')
		}
		return nil
	})
}
