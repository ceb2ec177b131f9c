package main

import (
	"fmt"

	"github.com/jeirt/jeirt/encoder"
	"github.com/spf13/cobra"
)

// newEncodeCmd returns `jeirt encode` with its merge subcommand.
func newEncodeCmd() *cobra.Command {
	var o encoder.EncodeFile
	cmd := &cobra.Command{
		Use:   "encode",
		Short: "Encode item texts into vectors with a frozen text encoder",
		Long: `Encode item texts into vectors with a frozen text encoder.

--encoder (default hash):
  hash, hash:DIM     weightless signed feature hashing (default DIM 384)
  DIR                a sentence-transformers BERT folder (config.json, model.safetensors,
                     tokenizer.json, modules.json, 1_Pooling/config.json)
  precomputed:FILE   vectors computed elsewhere (.json {id: [..]}, .jsonl, .npy + .ids.txt,
                     .safetensors, .csv), looked up by item id
--items: an items CSV (item_id,text; the columns jeirt data accepts) or a text file
  with one text per line (ids are the line numbers 1, 2, ...).
--out: .npy (rows in input order, ids in the same name with .ids.txt), .safetensors
  (tensor "embeddings", ids and encoder fingerprint in the metadata) or .jsonl
  ({"id": ..., "embedding": [...]} per line).
--shard i/n encodes items i, i+n, i+2n, ... (0-based) for cluster jobs; join the
  outputs with "jeirt encode merge".
--cache DIR reuses vectors of items whose id, text and encoder are unchanged.`,
		Example: `  jeirt encode --items configs/data/swebench-verified/item_content.csv --out out/q.npy
  jeirt encode --encoder hash:512 --items configs/data/swebench-verified/item_content.csv --out out/part0.jsonl --shard 0/2
  jeirt encode --encoder hash:512 --items configs/data/swebench-verified/item_content.csv --out out/part1.jsonl --shard 1/2
  jeirt encode merge --out out/q-merged.npy out/part0.jsonl out/part1.jsonl
  # a sentence-transformers folder you downloaded, with a cache that training reuses
  jeirt encode --encoder all-MiniLM-L6-v2 --items configs/data/swebench-verified/item_content.csv --out out/q.safetensors --cache out/cache`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Items == "" || o.Out == "" {
				return fmt.Errorf("encode: --items and --out are required")
			}
			o.Log = cmd.ErrOrStderr()
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Spec, "encoder", "hash", "hash, hash:DIM, a model folder, or precomputed:FILE")
	f.StringVar(&o.Items, "items", "", "items CSV (item_id,text) or a text file, one text per line")
	f.StringVar(&o.Out, "out", "", "output: .npy, .safetensors or .jsonl")
	alias(cmd, "input", "items")
	f.IntVar(&o.Batch, "batch", 64, "texts per forward pass (BERT)")
	f.StringVar(&o.Shard, "shard", "", "encode only shard i of n (i/n, 0-based)")
	f.StringVar(&o.Cache, "cache", "", "folder caching vectors by encoder, item id and text")
	cmd.AddCommand(newEncodeMergeCmd())
	return withDevice(cmd)
}

// newEncodeMergeCmd returns `jeirt encode merge`.
func newEncodeMergeCmd() *cobra.Command {
	var mergeOut, mergeItems string
	cmd := &cobra.Command{
		Use:   "merge --out FILE SHARD...",
		Short: "Join the outputs of encode --shard i/n",
		Long: `Join the outputs of encode --shard i/n into one file.

Give the n shard files in order 0..n-1: row k of the result is row k/n of shard
k mod n, which is the order of the original input. With --items, rows follow that
file's ids instead, and every id must be present. An id found in two shards is
an error.`,
		Example: `  jeirt encode --encoder hash:512 --items configs/data/swebench-verified/item_content.csv --out out/part0.jsonl --shard 0/2
  jeirt encode --encoder hash:512 --items configs/data/swebench-verified/item_content.csv --out out/part1.jsonl --shard 1/2
  jeirt encode merge --out out/q-merged.npy out/part0.jsonl out/part1.jsonl`,
		Args: needArgs(1, -1, "the shard files SHARD... (in order 0..n-1)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if mergeOut == "" {
				return fmt.Errorf("encode merge: --out is required")
			}
			v, err := encoder.MergeFiles(args, mergeItems, mergeOut)
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
	return cmd
}

func init() {
	rootCmd.AddCommand(newEncodeCmd())
}
