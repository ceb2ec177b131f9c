package main

import (
	"fmt"
	"time"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/read"
	"github.com/spf13/cobra"
)

func newDataParquetCmd() *cobra.Command {
	var rowGroup int
	cmd := &cobra.Command{
		Use:     "parquet IN.csv OUT.parquet",
		Short:   "Copy a CSV or TSV response or item-text file to Parquet, row for row",
		Long:    helpText("data-parquet"),
		Example: helpExamples("data-parquet"),
		Args:    needArgs(2, 2, "IN (a CSV or TSV file) and OUT (the Parquet file to write)"),
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
	return cli.Guard(cmd, cli.Outputs{ArgsIn: true, ArgOut: 2})
}

func init() { dataCmd.AddCommand(newDataParquetCmd()) }
