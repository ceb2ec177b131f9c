package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/onboard"
	"github.com/spf13/cobra"
)

func newAddModelCmd() *cobra.Command {
	var ro read.Options
	var opt onboard.AddModelsOptions
	var ckDir, responses, out, models, device string
	var asJSON bool
	var sug suggestFlags
	cmd := &cobra.Command{
		Use:   "add-model --checkpoint DIR --responses FILE [--models a,b] [--fraction F] [--out DIR]",
		Short: "Place new models on a trained JE-IRT map from their answers, or suggest which questions to ask",
		Long: `Place new models on a trained JE-IRT map: for each new model in --responses, fit only its
embedding row m, with the adapter, the question embeddings and every other row frozen
(a d-dimensional logistic regression y ~ sigmoid(u_j·m − |q_j|), u_j = q_j/|q_j|,
solved by damped Newton under a Gaussian prior; see --prior), and write a new
checkpoint folder with the rows added. The input checkpoint is never modified.

Questions the checkpoint has not seen are encoded with its encoder (same fingerprint
required); give their text with --items. A model the checkpoint already has is an error
unless --replace. --out defaults to DIR.plus-NAME (or DIR.plus-N-models), never an
existing folder.

--fraction F fits each model on a seeded random fraction F of its answers and scores
the rest: accuracy, AUC and log loss of the new row, of the model's mean accuracy on its
fit answers, and (with --replace, for a model the checkpoint already has) of its jointly
trained row.

add-model suggest K writes, instead, the K questions whose answers pin a new model's row down
best, as an items CSV (item_id,text,rank,p_mean,gain), by a greedy Bayesian design on
the normalised question embeddings under the row fit's prior: --design v-optimal (the
default) minimises the pool's summed Fisher-weighted predictive variance, with weights
p(1−p) averaged over the known models; d-optimal maximises log det(Λ + Σ w_j u_j u_jᵀ)
with weights at the mean model; random draws K questions (seeded by --seed). The pool is
the checkpoint's known items, or --pool (an item-text CSV).

Adaptive testing in rounds: add-model suggest --answered FILE gives the answers a new model has already
given (any responses format; one model, or pick it with --models). Its row is fitted from
them, and the next K questions are the V-optimal design at that fitted row and its
posterior, never a question already answered (p_mean is then the new model's own P).
A first round of random questions, then rounds of --answered, beats random questions at
equal K (docs/onboarding-routing.md, "Onboarding measured on real data"); a design made before any answer is
seen does not, reliably.`,
		Example: `  # re-place a model of the checkpoint from 10% or half of its answers (the rest scored)
  jeirt add-model --checkpoint out/quickstart --responses configs/data/swebench-verified/response_matrix.csv --models 20231010_rag_claude2 --replace --fraction 0.1 --seed 1
  jeirt add-model --checkpoint out/quickstart --responses configs/data/swebench-verified/response_matrix.csv --models 20231010_rag_claude2 --replace --fraction 0.5
  jeirt add-model suggest 25 --checkpoint out/quickstart --out out/ask-these.csv
  jeirt add-model suggest 10 --checkpoint out/quickstart --design random --seed 1 --out out/round1.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := resolveDevice(device); err != nil {
				return err
			}
			if ckDir == "" {
				return fmt.Errorf("add-model: --checkpoint is required")
			}
			if !(opt.Fraction > 0 && opt.Fraction <= 1) {
				return fmt.Errorf("add-model: --fraction %v is not in (0, 1]", opt.Fraction)
			}
			if cmd.Flags().Changed("suggest") {
				fmt.Fprintln(cmd.ErrOrStderr(), "add-model: --suggest K is deprecated; use jeirt add-model suggest K")
				if responses != "" {
					return fmt.Errorf("add-model: --suggest picks questions to ask; it takes no --responses")
				}
				return runSuggest(cmd, ckDir, out, models, opt.Seed, ro, sug, opt.Onboard)
			}
			if sug.answered != "" {
				return fmt.Errorf("add-model: --answered goes with --suggest")
			}
			if responses == "" {
				return fmt.Errorf("add-model: --responses is required (or add-model suggest K)")
			}
			if sug.pool != "" {
				return fmt.Errorf("add-model: --pool goes with --suggest")
			}
			ck, err := loadCheckpoint(ckDir, sug.encoder)
			if err != nil {
				return err
			}
			r, _, err := read.File(responses, ro)
			if err != nil {
				return err
			}
			if models != "" {
				opt.Models = splitList(models)
			}
			opt.Log = cmd.ErrOrStderr()
			res, err := onboard.AddModels(cmd.Context(), ck, r, opt)
			if err != nil {
				return err
			}
			if out == "" {
				out = onboard.DefaultOut(ckDir, res.Added)
			}
			nc := res.Checkpoint
			nc.Manifest.JEIRTVersion = version
			now := time.Now()
			nc.Manifest.Created = now.UTC().Format(time.RFC3339)
			if nc.Files, err = onboard.CarryFiles(ckDir, res.Added, opt, responses, now); err != nil {
				return err
			}
			if err := nc.Write(out, false); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"checkpoint": out, "new_items": res.NewItems, "models": res.Added})
			}
			printAdded(w, res.Added)
			fmt.Fprintf(w, "wrote %s (%d models, %d items; %d items new)\n", out, nc.Model.NumModels(), nc.Model.NumItems(), res.NewItems)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train")
	addEncoderFlag(cmd, &sug.encoder)
	f.StringVar(&responses, "responses", "", "responses of the new models (any format jeirt reads)")
	addReadFlags(cmd, &ro)
	f.StringVar(&models, "models", "", "comma-separated models of --responses to add (default: all)")
	f.Float64Var(&opt.Fraction, "fraction", 1, "fraction of each model's answers to fit on; the rest are scored")
	f.Int64Var(&opt.Seed, "seed", 42, "seed of the --fraction draw")
	f.StringVar(&out, "out", "", "new checkpoint folder (default DIR.plus-NAME)")
	f.BoolVar(&opt.Replace, "replace", false, "refit models the checkpoint already has")
	addPriorFlags(cmd, &opt.Onboard)
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addDeviceFlag(cmd, &device)
	// The old spelling of add-model suggest.
	f.IntVar(&sug.k, "suggest", 0, "suggest K questions to ask a new model instead of adding one")
	addSuggestFlags(cmd, &sug)
	for _, n := range []string{"suggest", "design", "answered", "pool"} {
		_ = f.MarkHidden(n)
	}
	cmd.AddCommand(newSuggestCmd())
	return cmd
}

func addPriorFlags(cmd *cobra.Command, ob *onboard.Onboard) {
	f := cmd.Flags()
	f.StringVar(&ob.Prior, "prior", "population", "prior on the new row: population (mean and covariance of the known rows) or l2")
	f.Float64Var(&ob.Shrink, "shrink", 0.1, "population prior: ridge added to the covariance, relative to its mean variance")
	f.Float64Var(&ob.L2, "l2", 1, "l2 prior: precision of N(0, I/l2)")
}

// suggestFlags are the flags of add-model suggest.
type suggestFlags struct {
	k                      int
	design, answered, pool string
	encoder                string // --encoder: overrides the checkpoint's recorded encoder
}

func addSuggestFlags(cmd *cobra.Command, s *suggestFlags) {
	f := cmd.Flags()
	f.StringVar(&s.design, "design", "v-optimal", "v-optimal (least summed predictive variance), d-optimal (largest log det) or random")
	f.StringVar(&s.answered, "answered", "", "the new model's answers so far; pick the next K questions at its fitted row")
	f.StringVar(&s.pool, "pool", "", "item-text CSV of candidate questions (default: the checkpoint's items)")
}

func newSuggestCmd() *cobra.Command {
	var ro read.Options
	var ob onboard.Onboard
	var ckDir, out, models, device string
	var seed int64
	var sug suggestFlags
	cmd := &cobra.Command{
		Use:   "suggest K --checkpoint DIR [--answered FILE] [--out FILE]",
		Short: "Suggest the K questions whose answers place a new model best",
		Long: `Write the K questions whose answers pin a new model's row down best, as an items CSV
(item_id,text,rank,p_mean,gain); see jeirt add-model --help for the designs and for
adaptive rounds with --answered.`,
		Example: `  jeirt add-model suggest 25 --checkpoint out/quickstart --out out/ask-these.csv
  jeirt add-model suggest 10 --checkpoint out/quickstart --design random --seed 1 --out out/round1.csv
  # after running the model on out/round1.csv and writing its answers (model,item_id,correct):
  jeirt add-model suggest 10 --checkpoint out/quickstart --answered out/answers.csv --out out/round2.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := resolveDevice(device); err != nil {
				return err
			}
			k, err := strconv.Atoi(args[0])
			if err != nil {
				return fmt.Errorf("add-model suggest: K %q is not a whole number", args[0])
			}
			if ckDir == "" {
				return fmt.Errorf("add-model: --checkpoint is required")
			}
			sug.k = k
			return runSuggest(cmd, ckDir, out, models, seed, ro, sug, ob)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train")
	addEncoderFlag(cmd, &sug.encoder)
	f.StringVar(&out, "out", "", "items CSV to write (default: stdout)")
	f.StringVar(&models, "models", "", "the model of --answered, when it holds several")
	f.Int64Var(&seed, "seed", 42, "seed of --design random")
	addSuggestFlags(cmd, &sug)
	addReadFlags(cmd, &ro)
	addPriorFlags(cmd, &ob)
	addDeviceFlag(cmd, &device)
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func printAdded(w io.Writer, added []onboard.AddedModel) {
	held := false
	for _, a := range added {
		held = held || a.Heldout != nil
	}
	if !held {
		for _, a := range added {
			verb := "added"
			if a.Replaced {
				verb = "refitted"
			}
			fmt.Fprintf(w, "%s %s from %d answers (Newton %d iterations)\n", verb, a.Name, a.FitCells, a.Iterations)
		}
		return
	}
	fmt.Fprintf(w, "%-32s %6s %6s  %-24s %-24s %-24s\n", "model", "fit", "held", "new row acc/AUC/logloss", "model mean", "joint (checkpoint row)")
	cell := func(s *eval.Scores) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f %.4f %.4f", s.Accuracy, s.AUC, s.LogLoss)
	}
	for _, a := range added {
		fmt.Fprintf(w, "%-32s %6d %6d  %-24s %-24s %-24s\n", a.Name, a.FitCells, a.HeldCells, cell(a.Heldout), cell(a.ModelMean), cell(a.Joint))
	}
}

func runSuggest(cmd *cobra.Command, ckDir, out, models string, seed int64, ro read.Options, s suggestFlags, ob onboard.Onboard) error {
	round := onboard.Round{Onboard: ob, K: s.k, Design: s.design, Seed: seed, Model: models, AnsweredFile: s.answered,
		Log: cmd.ErrOrStderr()}
	if err := round.Check(); err != nil {
		return err
	}
	ck, err := loadCheckpoint(ckDir, s.encoder)
	if err != nil {
		return err
	}
	if s.pool != "" {
		if round.Pool, err = read.Items(s.pool); err != nil {
			return err
		}
		if len(round.Pool.IDs) == 0 {
			return fmt.Errorf("%s: no items", s.pool)
		}
	}
	if s.answered != "" {
		if round.Answered, _, err = read.File(s.answered, ro); err != nil {
			return err
		}
	}
	res, err := round.Suggest(cmd.Context(), ck)
	if err != nil {
		return err
	}
	if res.Model != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s answered %d questions (%d right); its row is fitted from them\n",
			s.answered, res.Model, res.Answers, res.AnsRight)
	}
	if out == "" || out == "-" {
		return res.WriteCSV(cmd.OutOrStdout())
	}
	if err := model.WriteFileAtomic(out, res.WriteCSV); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d suggested questions to %s\n", len(res.Picks), out)
	return nil
}

func init() { rootCmd.AddCommand(newAddModelCmd()) }
