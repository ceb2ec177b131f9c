package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/spf13/cobra"
)

func newSynthCmd() *cobra.Command {
	var opt synth.Options
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "synth --kind 2pl|mirt|jeirt --models N --items J --out DIR",
		Short: "Simulate responses with known ground truth, for recovery tests and benchmarks",
		Long: `Simulate responses with known ground truth, for recovery tests and benchmarks.

Kinds:
  2pl    θ ~ N(0,1), a ~ U(0.3,2), b ~ N(0,1), P = sigmoid(θ·a + b)  (σ = 1)
  mirt   rank r, θ ~ N(0,I), A ≥ 0 with simple structure, b ~ N(0,1)
  jeirt  clustered item features x ∈ R^D, q = fixed random map of x, model rows m ∈ R^d,
         P = sigmoid(q·m/‖q‖ − ‖q‖); items get synthetic texts and topic groups

Writes into --out (atomically): responses.csv (long), synth.json (the options),
truth_models.csv and truth_items.csv (2pl/mirt: theta_k; a_k, b), and for jeirt
items.csv (item_id,text,category), features.npy (float32 J x D), truth_q.csv and
truth_m.csv. The same options and seed give byte-identical files.`,
		Example: `  jeirt synth --kind 2pl --models 100 --items 1000 --seed 1 --out runs/synth-2pl
  jeirt synth --kind mirt --rank 3 --models 200 --items 2000 --missing 0.3 --out runs/synth-mirt
  jeirt synth --kind jeirt --models 112 --items 5000 --dim 64 --embed-dim 16 --out runs/synth-je`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("synth: --out is required")
			}
			r, truth, err := synth.Generate(opt)
			if err != nil {
				return err
			}
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			err = model.WriteDirAtomic(out, force, func(tmp string) error {
				return writeSynth(tmp, opt, r, truth)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d models, %d items, %d observed cells, mean correct %.4f\n",
				out, r.NumModels(), r.NumItems(), r.Len(), r.MeanCorrect())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Kind, "kind", "2pl", "generator: 2pl|mirt|jeirt")
	f.IntVar(&opt.Models, "models", 100, "number of models N")
	f.IntVar(&opt.Items, "items", 1000, "number of items J")
	f.IntVar(&opt.Rank, "rank", 0, "ability dimensions r for mirt (default 2; 2pl is 1)")
	f.Float64Var(&opt.Missing, "missing", 0, "fraction of cells missing completely at random")
	f.Int64Var(&opt.Seed, "seed", 1, "random seed")
	f.IntVar(&opt.FeatureDim, "dim", 32, "item feature dimension D (jeirt)")
	f.IntVar(&opt.EmbedDim, "embed-dim", 8, "embedding dimension d of q and m (jeirt)")
	f.StringVar(&out, "out", "", "output folder (required)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func writeSynth(dir string, opt synth.Options, r *model.Responses, t *synth.Truth) error {
	if err := model.WriteLongCSV(filepath.Join(dir, "responses.csv"), r); err != nil {
		return err
	}
	if err := model.WriteFileAtomic(filepath.Join(dir, "synth.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(synthManifest{Kind: opt.Kind, Models: opt.Models, Items: opt.Items, Rank: t.Rank,
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
		if err := writeTable(filepath.Join(dir, "truth_items.csv"), "item", r.Items, cols, func(j, c int) float64 {
			if c == k {
				return t.B[j]
			}
			return t.A[j*k+c]
		}); err != nil {
			return err
		}
	}
	if t.Features != nil {
		if err := model.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
			return err
		}
		if err := model.WriteNPY(filepath.Join(dir, "features.npy"), t.Features, len(t.Features[0])); err != nil {
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

type synthManifest struct {
	Kind        string  `json:"kind"`
	Models      int     `json:"models"`
	Items       int     `json:"items"`
	Rank        int     `json:"rank,omitempty"`
	Missing     float64 `json:"missing"`
	Seed        int64   `json:"seed"`
	FeatureDim  int     `json:"feature_dim,omitempty"`
	EmbedDim    int     `json:"embed_dim,omitempty"`
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
	return model.WriteFileAtomic(path, func(w io.Writer) error {
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

func init() { rootCmd.AddCommand(newSynthCmd()) }
