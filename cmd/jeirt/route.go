package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/route"
	"github.com/spf13/cobra"
)

func newRouteCmd() *cobra.Command {
	var o route.Run
	var models string
	ro := &o.Router
	cmd := &cobra.Command{
		Use:   "route QUERIES --checkpoint DIR [--costs FILE] [--min-p P | --lambda L]",
		Short: "Send each query to the model of a JE-IRT checkpoint most likely to answer it",
		Long: `Route queries: encode each with the checkpoint's encoder, predict P(correct) for every
model (or those of --models), and choose

  without --costs        the highest P;
  with --costs           the cheapest model with P >= --min-p (when none reaches it, the
                         highest P, marked as a fallback);
  with --costs --lambda  the highest P − lambda·cost;
  with --margin D        the default model (--default, or the best accuracy on --data,
                         or the highest mean predicted P over the checkpoint's questions)
                         unless another model's P beats the default's by at least D.
                         D = 0 is the highest P, D = inf always the default; choose D
                         on validation questions with jeirt route eval --val.

--shortlist T first keeps only the T best models (by accuracy on --data, or by mean
predicted P over the checkpoint's questions); any rule then chooses among them. On
questions the checkpoint never saw, the highest P among many models is often noise;
a short list of strong models is the robust choice (see docs/onboarding-routing.md, "Routing across splits").

QUERIES is a text file with one query per line (its id is the line number), a JSONL file
of {"id": ..., "text": ...} objects, or - for standard input. Empty lines are skipped and
reported. --costs is a model,cost CSV that prices every routed model.
Output (--output): table, csv (id,model,p,cost,fallback,alt_1,p_1,...) or json (one
object per line). A file literally named "eval" must be given as ./eval.

jeirt route eval scores the router on held-out questions (see jeirt route eval --help).`,
		Example: `  echo "Fix the off-by-one error in the pagination helper" | jeirt route - --checkpoint out/quickstart --top 5
  echo "Fix the off-by-one error in the pagination helper" > out/questions.txt
  jeirt route out/questions.txt --checkpoint out/quickstart --output csv
  jeirt route out/questions.txt --checkpoint out/quickstart --margin 0.05 --data configs/data/swebench-verified/response_matrix.csv
  jeirt route out/questions.txt --checkpoint out/quickstart --shortlist 3 --data configs/data/swebench-verified/response_matrix.csv`,
		Args: needArgs(1, 1, "QUERIES: a text file with one query per line, a JSONL file, or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Checkpoint == "" {
				return fmt.Errorf("route: --checkpoint is required")
			}
			o.Router.Models, o.Router.MinPSet, o.Log = modelList(models), cmd.Flags().Changed("min-p"), cmd.ErrOrStderr()
			return o.Route(cmd.Context(), args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint folder written by jeirt train or add-model")
	addEncoderFlag(cmd, &o.Encoder)
	cmd.Flags().StringVar(&models, "models", "", "comma-separated models to choose from (default: all of the checkpoint)")
	cmd.Flags().StringVar(&ro.Costs, "costs", "", "model,cost CSV")
	cmd.Flags().Float64Var(&ro.MinP, "min-p", 0.7, "with --costs: the cheapest model with at least this P(correct) wins")
	cmd.Flags().Float64Var(&ro.Lambda, "lambda", 0, "with --costs: choose the highest P − lambda·cost instead")
	cmd.Flags().Float64Var(&ro.Margin, "margin", 0, "without --costs: leave the default model only for a model whose P beats its P by at least this (inf: never)")
	cmd.Flags().IntVar(&ro.Shortlist, "shortlist", 0, "choose only among the T best models (by accuracy on --data, else mean predicted P); 0: all")
	cmd.Flags().StringVar(&ro.Default, "default", "", "with --margin: the default model (default: the best on --data)")
	cmd.Flags().StringVar(&ro.Train, "data", "", "with --margin or --shortlist: training responses, to rank the models by accuracy")
	cmd.Flags().IntVar(&o.Top, "top", 3, "alternatives to list per query")
	cmd.Flags().StringVar(&o.Output, "output", "table", "output format: table, csv or json (JSON lines)")
	cmd.Flags().Var(&routeFormat{in: &ro.TrainRead.Format, out: &o.Output, cmd: cmd}, "format", "format of --data: auto|long|wide|wide-items|pyirt|patterns")
	cmd.Flags().StringVar(&ro.TrainRead.Duplicates, "duplicates", "majority", "repeated (model, item) rows of --data: majority (ties become missing)|first|error")
	alias(cmd, "train", "data")
	alias(cmd, "train-format", "format")
	cmd.AddCommand(newRouteEvalCmd())
	return withDevice(cmd)
}

// routeFormat is route's --format: the layout of --data, or, in the old
// spelling of --output (table, csv, json), the output format.
type routeFormat struct {
	in, out *string
	cmd     *cobra.Command
}

func (f *routeFormat) String() string {
	if *f.in == "" {
		return "auto"
	}
	return *f.in
}
func (f *routeFormat) Type() string { return "string" }
func (f *routeFormat) Set(v string) error {
	if v == "table" || v == "csv" || v == "json" {
		fmt.Fprintf(f.cmd.ErrOrStderr(), "route: --format %s is deprecated for the output format; use --output %s\n", v, v)
		*f.out = v
		return nil
	}
	if !slices.Contains(model.Formats, v) {
		return fmt.Errorf("%q is not an input format (%s); the output format is --output table|csv|json", v, strings.Join(model.Formats, "|"))
	}
	*f.in = v
	return nil
}

func newRouteEvalCmd() *cobra.Command {
	var e route.EvalRun
	cmd := &cobra.Command{
		Use:   "eval --checkpoint DIR --data FILE [--costs FILE] [--out FILE.csv]",
		Short: "Score the router against the best single model, random choice and the oracle",
		Long: `Score the router on held-out questions (for example the test.csv of a --by item split):
each question of --data goes to one of the checkpoint's models observed on it, and the
policy scores that model's label. Policies: router (highest P; the highest P among the
T models best-single ranks first, for every T of --shortlist; with --costs every
--min-p and --lambda of the sweep), best-single (the model with the best accuracy on
--train, or, without it, the highest mean predicted P over the checkpoint's items),
random (expected value of a uniform pick), oracle (a model that got it right, the
cheapest such) and cheapest.

The margin rule keeps best-single's model unless another model's P beats its P by at
least δ; every δ of --margin is scored (0 is the highest P, inf is best-single). With
--val (held-out questions that are not those of --data, for example the val.csv of the
split), δ is chosen on --val (the highest accuracy there, the larger δ on ties) and
the router at that δ is the row "router,margin-val,δ"; --data is never used to choose it.

Writes the cost-quality curve as CSV:
policy,rule,param,accuracy,total_cost,mean_cost,items,fallbacks.`,
		Example: `  jeirt data split --data configs/data/swebench-verified/response_matrix.csv --items configs/data/swebench-verified/item_content.csv \
      --by item --val 0.1 --test 0.2 --seed 42 --out out/swe-items
  jeirt train --config configs/quickstart.yaml --set data.responses= --set data.train=out/swe-items/train.csv \
      --set data.val=out/swe-items/val.csv --set data.test=out/swe-items/test.csv \
      --set data.items=out/swe-items/items.csv --set output=out/swe-by-item
  # stand-in prices: each model's accuracy
  awk -F, 'NR > 1 { s = 0; for (i = 2; i <= NF; i++) s += $i; print $1 "," s / (NF - 1) }' \
      configs/data/swebench-verified/response_matrix.csv | sed '1i model,cost' > out/costs.csv
  jeirt route eval --checkpoint out/swe-by-item --data out/swe-items/test.csv --items out/swe-items/items.csv \
      --train out/swe-items/train.csv --val out/swe-items/val.csv --costs out/costs.csv --out out/swe-route-curve.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.Checkpoint == "" || e.Data == "" {
				return fmt.Errorf("route eval: --checkpoint and --data are required")
			}
			e.Log = cmd.ErrOrStderr()
			return e.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&e.Checkpoint, "checkpoint", "", "checkpoint folder")
	addEncoderFlag(cmd, &e.Encoder)
	cmd.Flags().StringVar(&e.Data, "data", "", "held-out responses (questions the router did not train on)")
	addReadFlags(cmd, &e.Read)
	cmd.Flags().StringVar(&e.Train, "train", "", "training responses, to choose the best single model by accuracy")
	cmd.Flags().StringVar(&e.Val, "val", "", "validation responses on other held-out questions, to choose the margin δ (read like --data)")
	cmd.Flags().Float64SliceVar(&e.Margins, "margin", nil, "margin values δ to sweep (default 0,0.01,...,0.5,inf; inf is always added)")
	cmd.Flags().IntSliceVar(&e.Shortlists, "shortlist", nil, "shortlist sizes T to sweep: the highest P among the T best models (default 2,3,5,10)")
	cmd.Flags().StringVar(&e.Costs, "costs", "", "model,cost CSV")
	cmd.Flags().Float64SliceVar(&e.MinP, "min-p", nil, "min-p values to sweep (default 0.5,0.55,...,0.95)")
	cmd.Flags().Float64SliceVar(&e.Lambda, "lambda", nil, "lambda values to sweep (default a grid scaled to the cost range)")
	cmd.Flags().StringVar(&e.Out, "out", "", "CSV file for the curve (default: CSV on stdout)")
	return withDevice(cmd)
}

// modelList is --models as a list: nil when not given, empty (an error) when
// it names no model.
func modelList(s string) []string {
	if s == "" {
		return nil
	}
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func init() { rootCmd.AddCommand(newRouteCmd()) }
