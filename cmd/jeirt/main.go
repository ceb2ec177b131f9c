// Command jeirt fits IRT and JE-IRT models to item-level LLM benchmark results.
//
// Each command lives in its own file and adds itself to rootCmd in an init function.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jeirt/jeirt/model"
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
	code, msg := exitStatus(c, ctx, err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, "jeirt:", msg)
	}
	os.Exit(code)
}

// stopsOnSignal is the annotation of a command whose normal end is Ctrl-C
// or SIGTERM (serve): it exits 0 when stopped.
const stopsOnSignal = "jeirt-stops-on-signal"

// exitStatus is the one exit rule of every command: 0 when it finished; 130
// when it was interrupted (Ctrl-C, SIGTERM), after keeping what was
// complete, whether it says what it kept (a model.KeptError), wrote nothing
// (context.Canceled), or returned without an error after it stopped early;
// 1 for any other error.
func exitStatus(c *cobra.Command, ctx context.Context, err error) (int, string) {
	var kept *model.KeptError
	switch {
	case errors.As(err, &kept):
		return 130, kept.Error()
	case errors.Is(err, context.Canceled):
		return 130, "interrupted; nothing was written"
	case err != nil:
		return 1, err.Error()
	case ctx.Err() != nil && (c == nil || c.Annotations[stopsOnSignal] == ""):
		return 130, "interrupted; what was complete is kept (see above)"
	}
	return 0, ""
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
