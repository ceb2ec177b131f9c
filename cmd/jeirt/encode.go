package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/encoderun"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/spf13/cobra"
)

// newEncodeCmd returns `jeirt encode` with its merge subcommand.
func newEncodeCmd() *cobra.Command {
	var o encoderun.EncodeFile
	var precision string
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
			o.Log = model.LogTo(cmd.ErrOrStderr())
			// A model folder's forward pass runs on the GPU with --device
			// cuda (or auto in a CUDA build); same vectors and fingerprint.
			device := runDevice(cmd)
			switch precision {
			case "fp32", "tf32", "bf16":
			default:
				return fmt.Errorf("encode: --precision %q: want fp32, tf32 or bf16", precision)
			}
			o.OnDevice = func(enc encoder.Encoder) (encoder.Encoder, error) {
				on, err := backend.EncoderOn(device, enc)
				if err != nil {
					return nil, err
				}
				if precision != "fp32" {
					// The GPU encoder's linear layers on tensor cores; its
					// fingerprint (and so its cache entries) says so.
					p, ok := on.(interface{ SetPrecision(string) error })
					if !ok {
						return nil, fmt.Errorf("encode: --precision %s needs the encoder's forward pass on the GPU (--device cuda and a model folder)", precision)
					}
					if err := p.SetPrecision(precision); err != nil {
						return nil, err
					}
				}
				return on.(encoder.Encoder), nil
			}
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
	f.StringVar(&precision, "precision", "fp32", "linear layers of a GPU forward: fp32, tf32 or bf16 (tensor cores; vectors get their own fingerprint)")
	cmd.AddCommand(newEncodeMergeCmd())
	return guard(withDevice(cmd), outputs{files: []string{"out"}, sidecars: vectorSidecars})
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
	return guard(cmd, outputs{files: []string{"out"}, argsIn: true, sidecars: vectorSidecars})
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
