package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/encoderun"
	"github.com/jeirt/jeirt/encoder"
	"github.com/spf13/cobra"
)

// newEncodeCmd returns `jeirt encode` with its merge subcommand.
func newEncodeCmd() *cobra.Command {
	var o encoderun.EncodeFile
	cmd := &cobra.Command{
		Use:     "encode",
		Short:   "Encode item texts into vectors with a frozen text encoder",
		Long:    helpText("encode"),
		Example: helpExamples("encode"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Items == "" || o.Out == "" {
				return fmt.Errorf("encode: --items and --out are required")
			}
			o.Log, o.Device, o.Stdout = stderrLog(cmd), cli.RunDevice(cmd), cmd.OutOrStdout()
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Spec, "encoder", "hash", "hash, hash:DIM, tfidf, tfidf:DIM[:MIN_DF], a model folder, or precomputed:FILE")
	f.StringVar(&o.Items, "items", "", "item-text file (CSV, TSV, JSONL or Parquet with an id and a text column) or a text file, one text per line")
	f.StringVar(&o.Out, "out", "", "output: .npy, .safetensors or .jsonl")
	alias(cmd, "input", "items")
	f.IntVar(&o.Batch, "batch", 64, "texts per forward pass (BERT)")
	f.StringVar(&o.Shard, "shard", "", "encode only shard i of n (i/n, 0-based)")
	f.StringVar(&o.Cache, "cache", "", "folder caching vectors by encoder, item id and text")
	f.StringVar(&o.Emit, "emit", "", "slurm: write the job folder --out (a shard array and the merge behind it) instead of encoding here")
	f.IntVar(&o.Shards, "shards", 0, "with --emit slurm, the number of array tasks (shards)")
	f.BoolVar(&o.Force, "force", false, "replace --out if it exists (only what jeirt wrote is ever replaced)")
	f.BoolVar(&o.Submit, "submit", false, "with --emit slurm, submit the array and the merge (sbatch) and record their job ids")
	f.StringVar(&o.Precision, "precision", "fp32", "linear layers of a GPU forward: fp32, tf32 or bf16 (tensor cores; vectors get their own fingerprint)")
	cmd.AddCommand(newEncodeMergeCmd())
	return cli.Guard(withDevice(cmd), cli.Outputs{Files: []string{"out"}, FoldersWith: []string{"emit"}, Sidecars: vectorSidecars})
}

// newEncodeMergeCmd returns `jeirt encode merge`.
func newEncodeMergeCmd() *cobra.Command {
	var mergeOut, mergeItems string
	cmd := &cobra.Command{
		Use:     "merge --out FILE SHARD...",
		Short:   "Join the outputs of encode --shard i/n",
		Long:    helpText("encode-merge"),
		Example: helpExamples("encode-merge"),
		Args:    needArgs(1, -1, "the shard files SHARD... (in order 0..n-1)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mergeOut == "" {
				return fmt.Errorf("encode merge: --out is required")
			}
			v, err := encoderun.MergeFiles(args, mergeItems, mergeOut)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "encode merge: wrote %s (%d × %d) from %d shards\n", mergeOut, len(v.IDs), v.Dim, len(args))
			return nil
		},
	}
	cmd.Flags().StringVar(&mergeOut, "out", "", "merged output: .npy, .safetensors or .jsonl")
	cmd.Flags().StringVar(&mergeItems, "items", "", "order rows by the ids of this items file (as encode --items reads it) instead of interleaving")
	alias(cmd, "input", "items")
	return cli.Guard(cmd, cli.Outputs{Files: []string{"out"}, ArgsIn: true, Sidecars: vectorSidecars})
}

// vectorSidecars is the ids file written beside a .npy output.
func vectorSidecars(out string) []string {
	if strings.EqualFold(filepath.Ext(out), ".npy") {
		return []string{encoder.IDsPath(out)}
	}
	return nil
}

func init() {
	rootCmd.AddCommand(newEncodeCmd())
}
