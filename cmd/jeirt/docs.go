package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/cmd/internal/clidoc"
)

// The docs command writes the CLI reference (one Markdown file per command
// and an index) from the command tree itself, so flags and help text cannot
// drift from docs/cli. It is hidden: users read the files it writes.
func init() {
	var out, check string
	cmd := &cobra.Command{
		Use:     "docs",
		Short:   "Write the Markdown CLI reference (one file per command) to --out",
		Hidden:  true,
		Args:    cobra.NoArgs,
		Example: `  jeirt docs --out docs/cli`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" && check == "" {
				return fmt.Errorf("docs: --out DIR (or --check DIR) is required")
			}
			files, err := clidoc.Files(rootCmd, cli.FlagMeanings)
			msg := fmt.Sprintf("wrote %d files to %s", len(files), out)
			switch {
			case err == nil && check != "":
				err, msg = clidoc.Check(check, files), fmt.Sprintf("%s is up to date (%d files)", check, len(files))
			case err == nil:
				err = clidoc.Write(out, files)
			}
			if err != nil {
				return fmt.Errorf("docs: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder to write the Markdown reference to (e.g. docs/cli)")
	cmd.Flags().StringVar(&check, "check", "", "compare the reference in this folder with the commands' and fail when it differs")
	rootCmd.AddCommand(cli.Guard(cmd, cli.Outputs{}))
}
