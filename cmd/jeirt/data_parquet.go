package main

import (
	"fmt"
	"time"

	"github.com/jeirt/jeirt/model/read"
	"github.com/spf13/cobra"
)

func newDataParquetCmd() *cobra.Command {
	var rowGroup int
	cmd := &cobra.Command{
		Use:   "parquet IN.csv OUT.parquet",
		Short: "Copy a CSV or TSV response or item-text file to Parquet, row for row",
		Long: `Copy a CSV or TSV file (gzip transparent) to Parquet: every column becomes a
dictionary-encoded, Snappy-compressed string column of the same name, in row groups of
--row-group rows. Every jeirt command reads the copy as it reads the text, and faster.`,
		Example: `  jeirt data parquet configs/data/swebench-verified/response_matrix.csv out/swe.parquet
  jeirt irt fit --data out/swe.parquet --out out/swe-irt-parquet`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			began := time.Now()
			n, err := read.ConvertToParquet(args[0], args[1], rowGroup)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d rows in %.1fs\n", args[1], n, time.Since(began).Seconds())
			return nil
		},
	}
	cmd.Flags().IntVar(&rowGroup, "row-group", 1<<20, "rows per row group")
	return cmd
}

func init() { dataCmd.AddCommand(newDataParquetCmd()) }
