// Command jeirt fits IRT and JE-IRT models to item-level LLM benchmark results.
//
// Each command lives in its own file and adds itself to rootCmd in an init function.
package main

import (
	"context"
	"embed"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jeirt/jeirt/cmd/internal/cli"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/spf13/cobra"
)

// version is the jeirt release, written into checkpoints and fits.
const version = "0.1.0"

var rootCmd = &cobra.Command{
	Use:           "jeirt",
	Short:         "IRT and joint-embedding IRT for item-level LLM benchmark results",
	Version:       version,
	Example:       "  jeirt train --config configs/quickstart.yaml\n  jeirt irt fit --data configs/data/swebench-verified/response_matrix.csv --out out/swe-irt",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	// Ctrl-C cancels the context: long commands stop at the next check and
	// leave no half-written output.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := rootCmd.ExecuteContextC(ctx)
	code, msg := cli.ExitStatus(c, ctx, err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, "jeirt:", msg)
	}
	os.Exit(code)
}

// deviceUsage is the help of every --device flag.
const deviceUsage = "auto|cpu|cpu:fused|cuda: where the hot loops run (auto: cuda when this binary or its jeirt-cuda runner has a GPU, else cpu; cpu:fused: the hand-written JE-IRT step instead of the Gorgonia graph)"

// withDevice adds --device to a command that computes; guard resolves it
// (see runDevice).
func withDevice(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().String("device", backend.Auto, deviceUsage)
	return cmd
}

// The long help and the examples of each command are in help/NAME.txt: the
// long text, a line "--- examples ---", then the examples.
//
//go:embed help
var helpFiles embed.FS

func helpParts(name string) (long, examples string) {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err)
	}
	long, examples, _ = strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n--- examples ---")
	return long, strings.TrimPrefix(examples, "\n")
}

func helpText(name string) string     { l, _ := helpParts(name); return l }
func helpExamples(name string) string { _, e := helpParts(name); return e }

// stderrLog is a command's Logf: its progress lines to the command's stderr.
func stderrLog(cmd *cobra.Command) progress.Logf { return progress.LogTo(cmd.ErrOrStderr()) }
