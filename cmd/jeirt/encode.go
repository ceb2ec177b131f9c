package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/spf13/cobra"
)

// newEncodeCmd returns `jeirt encode` with its merge subcommand.
func newEncodeCmd() *cobra.Command {
	var o struct {
		spec, items, out, shard, cache string
		batch                          int
	}
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
			stderr := cmd.ErrOrStderr()
			if o.items == "" || o.out == "" {
				return fmt.Errorf("encode: --items and --out are required")
			}
			shard, nShards, err := parseShard(o.shard)
			if err != nil {
				return err
			}
			enc, err := encoder.Open(o.spec)
			if err != nil {
				return err
			}
			if b, ok := enc.(interface{ SetBatchSize(int) }); ok {
				b.SetBatchSize(o.batch)
			}
			ids, texts, err := encoder.ReadTexts(o.items)
			if err != nil {
				return err
			}
			if f, ok := enc.(encoder.Fitter); ok {
				// Fitted on every input text before sharding, so all shards agree.
				if err := f.Fit(cmd.Context(), texts); err != nil {
					return err
				}
			}
			if nShards > 1 {
				var sid, stext []string
				for i := shard; i < len(ids); i += nShards {
					sid, stext = append(sid, ids[i]), append(stext, texts[i])
				}
				ids, texts = sid, stext
			}
			var cache *encoder.Cache
			if o.cache != "" {
				cache = &encoder.Cache{Dir: o.cache}
			}
			fmt.Fprintf(stderr, "encode: %d items with %s (dim %d)\n", len(ids), enc.Fingerprint(), enc.Dim())
			start := time.Now()
			last := start
			vecs, err := encoder.EncodeItems(cmd.Context(), enc, ids, texts, encoder.ItemOptions{
				Cache: cache,
				Chunk: max(o.batch*4, 64),
				Progress: func(done, total int) {
					if now := time.Now(); now.Sub(last) > 2*time.Second || done == total {
						last = now
						rate := float64(done) / now.Sub(start).Seconds()
						fmt.Fprintf(stderr, "encode: %d/%d items (%.0f/s, ETA %s)\n", done, total, rate, time.Duration(float64(total-done)/max(rate, 1e-9)*float64(time.Second)).Round(time.Second))
					}
				},
			})
			if err != nil {
				return err
			}
			meta := map[string]string{"encoder": enc.Fingerprint()}
			if nShards > 1 {
				meta["shard"] = o.shard
			}
			if err := encoder.WriteVectors(o.out, &encoder.Vectors{IDs: ids, Rows: vecs, Dim: enc.Dim()}, meta); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "encode: wrote %s (%d × %d) in %s\n", o.out, len(ids), enc.Dim(), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.spec, "encoder", "hash", "hash, hash:DIM, a model folder, or precomputed:FILE")
	f.StringVar(&o.items, "items", "", "items CSV (item_id,text) or a text file, one text per line")
	f.StringVar(&o.out, "out", "", "output: .npy, .safetensors or .jsonl")
	alias(cmd, "input", "items")
	f.IntVar(&o.batch, "batch", 64, "texts per forward pass (BERT)")
	f.StringVar(&o.shard, "shard", "", "encode only shard i of n (i/n, 0-based)")
	f.StringVar(&o.cache, "cache", "", "folder caching vectors by encoder, item id and text")
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
			shards := make([]*encoder.Vectors, len(args))
			for i, p := range args {
				v, err := encoder.ReadVectors(p)
				if err != nil {
					return err
				}
				shards[i] = v
			}
			var order []string
			if mergeItems != "" {
				var err error
				if order, _, err = encoder.ReadTexts(mergeItems); err != nil {
					return err
				}
			}
			out, err := encoder.MergeShards(shards, args, order, mergeItems)
			if err != nil {
				return err
			}
			n := len(shards)
			if err := encoder.WriteVectors(mergeOut, out, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "encode merge: wrote %s (%d × %d) from %d shards\n", mergeOut, len(out.IDs), out.Dim, n)
			return nil
		},
	}
	cmd.Flags().StringVar(&mergeOut, "out", "", "merged output: .npy, .safetensors or .jsonl")
	cmd.Flags().StringVar(&mergeItems, "items", "", "order rows by the ids of this items file (as encode --items reads it) instead of interleaving")
	alias(cmd, "input", "items")
	return cmd
}

// parseShard reads "i/n" (0 <= i < n); "" means the whole input.
func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("encode: --shard %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return i, n, nil
}

func init() {
	rootCmd.AddCommand(newEncodeCmd())
}
