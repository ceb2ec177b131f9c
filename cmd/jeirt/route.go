package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
	"github.com/spf13/cobra"
)

func newRouteCmd() *cobra.Command {
	var ckDir, models, costsPath, format, defaultName, trainPath, encSpec string
	var trainRO read.Options
	var minP, lambda, margin float64
	var top, shortlist int
	cmd := &cobra.Command{
		Use:   "route QUERIES --checkpoint DIR [--costs FILE] [--min-p P | --lambda L]",
		Short: "Send each query to the model of a JE-IRT checkpoint most likely to answer it",
		Long: `Route queries: encode each with the checkpoint's encoder, predict P(correct) for every
model (or those of --models), and choose

  without --costs        the highest P;
  with --costs           the cheapest model with P >= --min-p (when none reaches it, the
                         highest P, marked as a fallback);
  with --costs --lambda  the highest P − lambda·cost;
  with --margin D        the default model (--default, or the best accuracy on --train,
                         or the highest mean predicted P over the checkpoint's questions)
                         unless another model's P beats the default's by at least D.
                         D = 0 is the highest P, D = inf always the default; choose D
                         on validation questions with jeirt route eval --val.

--shortlist T first keeps only the T best models (by accuracy on --train, or by mean
predicted P over the checkpoint's questions); any rule then chooses among them. On
questions the checkpoint never saw, the highest P among many models is often noise;
a short list of strong models is the robust choice (see docs/onboarding-routing.md, "Routing across splits").

QUERIES is a text file with one query per line (its id is the line number), a JSONL file
of {"id": ..., "text": ...} objects, or - for standard input. Empty lines are skipped and
reported. --costs is a model,cost CSV that prices every routed model.
Output (--format): table, csv (id,model,p,cost,fallback,alt_1,p_1,...) or json (one
object per line). A file literally named "eval" must be given as ./eval.

jeirt route eval scores the router on held-out questions (see jeirt route eval --help).`,
		Example: `  echo "Fix the off-by-one error in the pagination helper" | jeirt route - --checkpoint out/quickstart --top 5
  echo "Fix the off-by-one error in the pagination helper" > out/questions.txt
  jeirt route out/questions.txt --checkpoint out/quickstart --format csv
  jeirt route out/questions.txt --checkpoint out/quickstart --margin 0.05 --train configs/data/swebench-verified/response_matrix.csv
  jeirt route out/questions.txt --checkpoint out/quickstart --shortlist 3 --train configs/data/swebench-verified/response_matrix.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" {
				return fmt.Errorf("route: --checkpoint is required")
			}
			if format != "table" && format != "csv" && format != "json" {
				return fmt.Errorf("route: --format %q: want table, csv or json", format)
			}
			if top < 0 {
				return fmt.Errorf("route: --top %d must not be negative", top)
			}
			start := time.Now()
			ck, err := loadCheckpoint(ckDir, encSpec)
			if err != nil {
				return err
			}
			rt, err := route.NewRouter(ck, route.RouterOptions{Models: modelList(models), Costs: costsPath, MinP: minP, Lambda: lambda,
				MinPSet: cmd.Flags().Changed("min-p"), Margin: margin, Shortlist: shortlist, Default: defaultName,
				Train: trainPath, TrainRead: trainRO})
			if err != nil {
				return err
			}
			enc, err := jeirt.OpenCheckpointEncoder(ck)
			if err != nil {
				return err
			}
			loaded := time.Now()
			name, in := args[0], io.Reader(nil)
			if name == "-" {
				name, in = "stdin", cmd.InOrStdin()
			} else {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			qf, err := route.ReadQueries(name, in)
			if err != nil {
				return err
			}
			log := cmd.ErrOrStderr()
			if len(qf.Empty) > 0 {
				fmt.Fprintf(log, "route: skipped %s in %s (%s)\n", plural(len(qf.Empty), "empty line", "empty lines"), name, lineList(qf.Empty, 10))
			}
			if len(qf.Queries) == 0 {
				return fmt.Errorf("route: %s has no queries", name)
			}
			choices, err := routeQueries(cmd.Context(), ck.Model, enc, rt, qf.Queries)
			if err != nil {
				return err
			}
			if err := route.WriteChoices(cmd.OutOrStdout(), format, ck.Model, rt, qf.Queries, choices, top); err != nil {
				return err
			}
			fallbacks := 0
			for _, c := range choices {
				if c.Fallback {
					fallbacks++
				}
			}
			if fallbacks > 0 {
				fmt.Fprintf(log, "route: %d of %d queries had no model with P >= %g; each went to its highest-P model instead\n", fallbacks, len(choices), rt.MinP)
			}
			fmt.Fprintf(log, "route: %d queries, %d models, rule %s%s; load %.1f ms, encode+route %.2f ms\n",
				len(choices), len(rt.Candidates), rt.Rule(), route.MarginNote(ck.Model, rt), ms(loaded.Sub(start)), ms(time.Since(loaded)))
			return nil
		},
	}
	cmd.Flags().StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train or add-model")
	addEncoderFlag(cmd, &encSpec)
	cmd.Flags().StringVar(&models, "models", "", "comma-separated models to choose from (default: all of the checkpoint)")
	cmd.Flags().StringVar(&costsPath, "costs", "", "model,cost CSV")
	cmd.Flags().Float64Var(&minP, "min-p", 0.7, "with --costs: the cheapest model with at least this P(correct) wins")
	cmd.Flags().Float64Var(&lambda, "lambda", 0, "with --costs: choose the highest P − lambda·cost instead")
	cmd.Flags().Float64Var(&margin, "margin", 0, "without --costs: leave the default model only for a model whose P beats its P by at least this (inf: never)")
	cmd.Flags().IntVar(&shortlist, "shortlist", 0, "choose only among the T best models (by accuracy on --train, else mean predicted P); 0: all")
	cmd.Flags().StringVar(&defaultName, "default", "", "with --margin: the default model (default: the best on --train)")
	cmd.Flags().StringVar(&trainPath, "train", "", "with --margin or --shortlist: training responses, to rank the models by accuracy")
	cmd.Flags().StringVar(&trainRO.Format, "train-format", "auto", "format of --train: auto, long, wide, wide-items or pyirt")
	cmd.Flags().IntVar(&top, "top", 3, "alternatives to list per query")
	cmd.Flags().StringVar(&format, "format", "table", "output: table, csv or json (JSON lines)")
	cmd.AddCommand(newRouteEvalCmd())
	return withDevice(cmd)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// lineList renders up to limit line numbers: "lines 3, 7 and 12 more".
func lineList(lines []int, limit int) string {
	var b strings.Builder
	if len(lines) == 1 {
		b.WriteString("line ")
	} else {
		b.WriteString("lines ")
	}
	for k, l := range lines {
		if k == limit {
			fmt.Fprintf(&b, " and %d more", len(lines)-limit)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

// routeQueries embeds the queries (jeirt.EmbedQuestions) and routes each.
func routeQueries(ctx context.Context, m *model.JEIRT, enc encoder.Encoder, rt *model.Router, qs []route.Query) ([]model.Choice, error) {
	ids, texts := make([]string, len(qs)), make([]string, len(qs))
	for k, q := range qs {
		ids[k], texts[k] = q.ID, q.Text
	}
	emb, err := jeirt.EmbedQuestions(ctx, m, enc, ids, texts)
	if err != nil {
		return nil, fmt.Errorf("route: %w", err)
	}
	out := make([]model.Choice, len(qs))
	for k := range qs {
		out[k] = rt.Route(emb[k])
	}
	return out, nil
}

func newRouteEvalCmd() *cobra.Command {
	var ro, trainRO read.Options
	var ckDir, data, costsPath, trainPath, valPath, out, encSpec string
	var minP, lambda, margins []float64
	var shortlists []int
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
			if ckDir == "" || data == "" {
				return fmt.Errorf("route eval: --checkpoint and --data are required")
			}
			ck, err := loadCheckpoint(ckDir, encSpec)
			if err != nil {
				return err
			}
			r, _, err := read.File(data, ro)
			if err != nil {
				return err
			}
			opt := route.RouteEvalOptions{MinP: minP, Lambda: lambda, Margins: margins, Shortlists: shortlists}
			if costsPath != "" {
				if opt.Costs, err = route.ReadCosts(costsPath, ck.Model.Models); err != nil {
					return err
				}
			} else if len(minP) > 0 || len(lambda) > 0 {
				return fmt.Errorf("route eval: --min-p and --lambda sweeps need --costs")
			}
			if trainPath != "" {
				if opt.Reference, err = route.TrainReference(ck.Model, trainPath, trainRO); err != nil {
					return err
				}
				if opt.BenchmarkReference, err = route.TrainBenchmarkReference(ck.Model, trainPath, trainRO); err != nil {
					return err
				}
			}
			var unknown []string
			for _, name := range r.Models {
				if !slices.Contains(ck.Model.Models, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) > 0 && len(unknown) < r.NumModels() {
				fmt.Fprintf(cmd.ErrOrStderr(), "route eval: %d models of %s are not in the checkpoint and are ignored (%s)\n",
					len(unknown), data, route.ShortList(unknown, 3))
			}
			q, _, err := jeirt.Questions(cmd.Context(), ck, r, nil, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if valPath != "" {
				if err := tuneMargin(cmd, ck, valPath, ro, &opt); err != nil {
					return err
				}
			}
			pts, err := route.RouteEval(ck.Model, r, q, opt)
			if err != nil {
				return err
			}
			if out != "" && out != "-" {
				if err := model.WriteFileAtomic(out, func(w io.Writer) error { return route.WriteRouteCSV(w, pts) }); err != nil {
					return err
				}
				printRouteSummary(cmd.OutOrStdout(), pts)
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d rows)\n", out, len(pts))
				return nil
			}
			return route.WriteRouteCSV(cmd.OutOrStdout(), pts)
		},
	}
	cmd.Flags().StringVar(&ckDir, "checkpoint", "", "checkpoint folder")
	addEncoderFlag(cmd, &encSpec)
	cmd.Flags().StringVar(&data, "data", "", "held-out responses (questions the router did not train on)")
	addReadFlags(cmd, &ro)
	cmd.Flags().StringVar(&trainPath, "train", "", "training responses, to choose the best single model by accuracy")
	cmd.Flags().StringVar(&valPath, "val", "", "validation responses on other held-out questions, to choose the margin δ (read like --data)")
	cmd.Flags().Float64SliceVar(&margins, "margin", nil, "margin values δ to sweep (default 0,0.01,...,0.5,inf; inf is always added)")
	cmd.Flags().IntSliceVar(&shortlists, "shortlist", nil, "shortlist sizes T to sweep: the highest P among the T best models (default 2,3,5,10)")
	cmd.Flags().StringVar(&costsPath, "costs", "", "model,cost CSV")
	cmd.Flags().Float64SliceVar(&minP, "min-p", nil, "min-p values to sweep (default 0.5,0.55,...,0.95)")
	cmd.Flags().Float64SliceVar(&lambda, "lambda", nil, "lambda values to sweep (default a grid scaled to the cost range)")
	cmd.Flags().StringVar(&out, "out", "", "CSV file for the curve (default: CSV on stdout)")
	return withDevice(cmd)
}

// tuneMargin scores the margin sweep on the validation responses in valPath
// and sets opt.TunedMargin to the δ with the best accuracy there.
func tuneMargin(cmd *cobra.Command, ck *model.Checkpoint, valPath string, ro read.Options, opt *route.RouteEvalOptions) error {
	v, _, err := read.File(valPath, ro)
	if err != nil {
		return err
	}
	q, _, err := jeirt.Questions(cmd.Context(), ck, v, nil, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	vopt := *opt
	vopt.MinP, vopt.Lambda, vopt.Costs = []float64{}, []float64{}, nil
	pts, err := route.RouteEval(ck.Model, v, q, vopt)
	if err != nil {
		return fmt.Errorf("%s: %w", valPath, err)
	}
	delta, err := route.TuneMargin(pts)
	if err != nil {
		return err
	}
	opt.TunedMargin = &delta
	var best, maxP, tuned route.RoutePoint
	for _, p := range pts {
		switch {
		case p.Rule == "best-single":
			best = p
		case p.Rule == "max-p":
			maxP = p
		case p.Rule == "margin" && p.Param == delta:
			tuned = p
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "route eval: margin δ = %g chosen on %s (%d questions): accuracy there %.4f, best single %.4f, max-p %.4f\n",
		delta, valPath, tuned.Items, tuned.Accuracy, best.Accuracy, maxP.Accuracy)
	return nil
}

// printRouteSummary prints the max-p router and the reference policies.
func printRouteSummary(w io.Writer, pts []route.RoutePoint) {
	fmt.Fprintf(w, "%-18s %-18s %8s %9s %12s %6s\n", "policy", "rule", "param", "accuracy", "mean cost", "items")
	for _, p := range pts {
		param, cost := "", ""
		if !math.IsNaN(p.Param) {
			param = strconv.FormatFloat(p.Param, 'g', 4, 64)
		}
		if !math.IsNaN(p.MeanCost) {
			cost = strconv.FormatFloat(p.MeanCost, 'f', 4, 64)
		}
		fmt.Fprintf(w, "%-18s %-18s %8s %9.4f %12s %6d\n", p.Policy, p.Rule, param, p.Accuracy, cost, p.Items)
	}
}

// modelList is --models as a list: nil when not given, empty (an error) when
// it names no model.
func modelList(s string) []string {
	if s == "" {
		return nil
	}
	return append([]string{}, splitList(s)...)
}

func init() { rootCmd.AddCommand(newRouteCmd()) }
