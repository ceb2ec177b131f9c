package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/onboard"
	"github.com/spf13/cobra"
)

// onboardFile lists, in a checkpoint folder, the models added by add-model.
const onboardFile = "onboard.json"

func newAddModelCmd() *cobra.Command {
	var ro model.ReadOptions
	var opt onboard.AddModelsOptions
	var ckDir, responses, out, models, pool, answered string
	var suggest int
	var design string
	var asJSON bool
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

--suggest K writes, instead, the K questions whose answers pin a new model's row down
best, as an items CSV (item_id,text,rank,p_mean,gain), by a greedy Bayesian design on
the normalised question embeddings under the row fit's prior: --design v-optimal (the
default) minimises the pool's summed Fisher-weighted predictive variance, with weights
p(1−p) averaged over the known models; d-optimal maximises log det(Λ + Σ w_j u_j u_jᵀ)
with weights at the mean model; random draws K questions (seeded by --seed). The pool is
the checkpoint's known items, or --pool (an item-text CSV).

Adaptive testing in rounds: --answered FILE gives the answers a new model has already
given (any responses format; one model, or pick it with --models). Its row is fitted from
them, and the next K questions are the V-optimal design at that fitted row and its
posterior, never a question already answered (p_mean is then the new model's own P).
A first round of random questions, then rounds of --answered, beats random questions at
equal K (README, "Onboarding measured on real data"); a design made before any answer is
seen does not, reliably.`,
		Example: `  jeirt add-model --checkpoint runs/swe --responses new_model.csv --items new_items.csv
  jeirt add-model --checkpoint runs/swe --responses all.csv --models gpt-x --fraction 0.1 --seed 1
  jeirt add-model --checkpoint runs/swe --responses all.csv --models gpt-x --replace --fraction 0.5
  jeirt add-model --suggest 25 --checkpoint runs/swe --out ask-these.csv
  jeirt add-model --suggest 10 --checkpoint runs/swe --design random --seed 1 --out round1.csv
  jeirt add-model --suggest 10 --checkpoint runs/swe --answered answers-so-far.csv --out round2.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" {
				return fmt.Errorf("add-model: --checkpoint is required")
			}
			if cmd.Flags().Changed("suggest") {
				if responses != "" {
					return fmt.Errorf("add-model: --suggest picks questions to ask; it takes no --responses")
				}
				return runSuggest(cmd, suggestArgs{ck: ckDir, pool: pool, out: out, answered: answered, model: models,
					K: suggest, design: design, seed: opt.Seed, read: ro}, opt.Onboard)
			}
			if answered != "" {
				return fmt.Errorf("add-model: --answered goes with --suggest")
			}
			if responses == "" {
				return fmt.Errorf("add-model: --responses is required (or --suggest K)")
			}
			if pool != "" {
				return fmt.Errorf("add-model: --pool goes with --suggest")
			}
			ck, err := model.LoadCheckpoint(ckDir)
			if err != nil {
				return err
			}
			r, _, err := model.ReadFile(responses, ro)
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
				out = defaultAddOut(ckDir, res.Added)
			}
			nc := res.Checkpoint
			nc.Manifest.JEIRTVersion = version
			nc.Manifest.Created = time.Now().UTC().Format(time.RFC3339)
			if nc.Files, err = carryFiles(ckDir, res.Added, opt, responses); err != nil {
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
	cmd.Flags().StringVar(&ckDir, "checkpoint", "", "checkpoint folder written by jeirt train")
	cmd.Flags().StringVar(&responses, "responses", "", "responses of the new models (any format jeirt reads)")
	addReadFlags(cmd, &ro)
	cmd.Flags().StringVar(&models, "models", "", "comma-separated models of --responses to add (default: all); with --suggest, the model of --answered")
	cmd.Flags().Float64Var(&opt.Fraction, "fraction", 1, "fraction of each model's answers to fit on; the rest are scored")
	cmd.Flags().Int64Var(&opt.Seed, "seed", 42, "seed of the --fraction draw, or of --suggest with --design random")
	cmd.Flags().StringVar(&out, "out", "", "new checkpoint folder (default DIR.plus-NAME); with --suggest, the items CSV (default stdout)")
	cmd.Flags().BoolVar(&opt.Replace, "replace", false, "refit models the checkpoint already has")
	cmd.Flags().StringVar(&opt.Prior, "prior", "population", "prior on the new row: population (mean and covariance of the known rows) or l2")
	cmd.Flags().Float64Var(&opt.Shrink, "shrink", 0.1, "population prior: ridge added to the covariance, relative to its mean variance")
	cmd.Flags().Float64Var(&opt.L2, "l2", 1, "l2 prior: precision of N(0, I/l2)")
	cmd.Flags().IntVar(&suggest, "suggest", 0, "suggest K questions to ask a new model instead of adding one")
	cmd.Flags().StringVar(&design, "design", "v-optimal", "with --suggest: v-optimal (least summed predictive variance), d-optimal (largest log det) or random")
	cmd.Flags().StringVar(&answered, "answered", "", "with --suggest: the new model's answers so far; pick the next K questions at its fitted row")
	cmd.Flags().StringVar(&pool, "pool", "", "with --suggest: item-text CSV of candidate questions (default: the checkpoint's items)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
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

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultAddOut is DIR.plus-NAME (one model) or DIR.plus-N-models, with -2,
// -3, ... appended until the name is free.
func defaultAddOut(ckDir string, added []onboard.AddedModel) string {
	base := filepath.Clean(ckDir)
	if len(added) == 1 {
		base += ".plus-" + strings.Trim(unsafeName.ReplaceAllString(added[0].Name, "_"), "_")
	} else {
		base += fmt.Sprintf(".plus-%d-models", len(added))
	}
	out := base
	for k := 2; ; k++ {
		if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = base + "-" + strconv.Itoa(k)
	}
}

// carryFiles copies metrics.json of the source checkpoint and extends its
// onboard.json with the models just added.
func carryFiles(ckDir string, added []onboard.AddedModel, opt onboard.AddModelsOptions, responses string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if b, err := os.ReadFile(filepath.Join(ckDir, "metrics.json")); err == nil {
		files["metrics.json"] = b
	}
	type entry struct {
		onboard.AddedModel
		Responses string  `json:"responses"`
		Fraction  float64 `json:"fraction"`
		Seed      int64   `json:"seed"`
		Prior     string  `json:"prior"`
		Added     string  `json:"added"`
	}
	var log []json.RawMessage
	if b, err := os.ReadFile(filepath.Join(ckDir, onboardFile)); err == nil {
		if err := json.Unmarshal(b, &log); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(ckDir, onboardFile), err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	prior := opt.Prior
	if prior == "" {
		prior = "population"
	}
	for _, a := range added {
		b, err := json.Marshal(entry{a, responses, opt.Fraction, opt.Seed, prior, now})
		if err != nil {
			return nil, err
		}
		log = append(log, b)
	}
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return nil, err
	}
	files[onboardFile] = append(b, '\n')
	return files, nil
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
	cell := func(s *model.Scores) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f %.4f %.4f", s.Accuracy, s.AUC, s.LogLoss)
	}
	for _, a := range added {
		fmt.Fprintf(w, "%-32s %6d %6d  %-24s %-24s %-24s\n", a.Name, a.FitCells, a.HeldCells, cell(a.Heldout), cell(a.ModelMean), cell(a.Joint))
	}
}

// suggestArgs are the flags of add-model --suggest.
type suggestArgs struct {
	ck, pool, out, answered, model string
	K                              int
	design                         string
	seed                           int64
	read                           model.ReadOptions
}

func runSuggest(cmd *cobra.Command, a suggestArgs, ob onboard.Onboard) error {
	switch a.design {
	case "v-optimal", "random":
	case "d-optimal":
		if a.answered != "" {
			return fmt.Errorf("add-model: --answered designs are v-optimal (or random); got --design d-optimal")
		}
	default:
		return fmt.Errorf("add-model: --design %q: want v-optimal, d-optimal or random", a.design)
	}
	if a.model != "" && a.answered == "" {
		return fmt.Errorf("add-model: --models goes with --responses or, with --suggest, with --answered")
	}
	ck, err := model.LoadCheckpoint(a.ck)
	if err != nil {
		return err
	}
	m := ck.Model
	var ids, texts []string
	var q [][]float32
	if a.pool == "" {
		ids = m.Items
		texts = make([]string, len(ids))
		for j := range ids {
			q = append(q, m.ItemEmbedding(j))
		}
	} else {
		t, err := model.ReadItems(a.pool)
		if err != nil {
			return err
		}
		if len(t.IDs) == 0 {
			return fmt.Errorf("%s: no items", a.pool)
		}
		ids, texts = t.IDs, t.Text
		r := &model.Responses{Items: t.IDs, ItemText: t.Text}
		q, _, err = jeirt.Questions(cmd.Context(), ck, r, nil, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
	}
	prior, err := ob.PriorFor(m)
	if err != nil {
		return err
	}
	var picks []onboard.Suggested
	switch {
	case a.answered != "":
		post, done, perr := answeredPosterior(cmd, ck, a, ids, prior, ob)
		if perr != nil {
			return perr
		}
		if a.design == "random" {
			picks, err = onboard.SuggestRandom(q, a.K, uint64(a.seed), done, post.Mean)
		} else {
			picks, err = onboard.SuggestNext(cmd.Context(), q, a.K, post, done)
		}
	case a.design == "random":
		picks, err = onboard.SuggestRandom(q, a.K, uint64(a.seed), nil, prior.Mean)
	case a.design == "d-optimal":
		picks, err = onboard.SuggestItems(cmd.Context(), m, q, a.K, prior)
	default:
		picks, err = onboard.SuggestItemsV(cmd.Context(), m, q, a.K, prior)
	}
	if err != nil {
		return err
	}
	num := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	write := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"item_id", "text", "rank", "p_mean", "gain"})
		for k, s := range picks {
			cw.Write([]string{ids[s.Index], texts[s.Index], strconv.Itoa(k + 1), num(s.P), num(s.Gain)})
		}
		cw.Flush()
		return cw.Error()
	}
	if a.out == "" || a.out == "-" {
		return write(cmd.OutOrStdout())
	}
	if err := model.WriteFileAtomic(a.out, write); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d suggested questions to %s\n", len(picks), a.out)
	return nil
}

// answeredPosterior reads the new model's answers so far (--answered), fits
// its row, and returns the row's posterior and which of the candidate
// questions ids it has answered.
func answeredPosterior(cmd *cobra.Command, ck *model.Checkpoint, a suggestArgs, ids []string, prior onboard.Gaussian, ob onboard.Onboard) (onboard.Gaussian, []bool, error) {
	r, _, err := model.ReadFile(a.answered, a.read)
	if err != nil {
		return onboard.Gaussian{}, nil, err
	}
	name := a.model
	switch {
	case name != "" && strings.Contains(name, ","):
		return onboard.Gaussian{}, nil, fmt.Errorf("add-model: --suggest --answered places one model; got --models %s", name)
	case name == "" && r.NumModels() != 1:
		return onboard.Gaussian{}, nil, fmt.Errorf("%s: answers of %d models; pick the new one with --models NAME", a.answered, r.NumModels())
	case name == "":
		name = r.Models[0]
	}
	mi := r.ModelIndex(name)
	if mi < 0 {
		return onboard.Gaussian{}, nil, fmt.Errorf("%s: no answers of model %q (it has %s)", a.answered, name, strings.Join(r.Models, ", "))
	}
	cells := r.ByModel().Row(mi)
	want := make([]bool, r.NumItems()) // the items it answered
	answered := make(map[string]bool, len(cells))
	var correct int
	for _, c := range cells {
		want[r.Item[c]] = true
		answered[r.Items[r.Item[c]]] = true
		correct += int(r.Label[c])
	}
	qa, _, err := jeirt.Questions(cmd.Context(), ck, r, want, cmd.ErrOrStderr())
	if err != nil {
		return onboard.Gaussian{}, nil, fmt.Errorf("%s: %w", a.answered, err)
	}
	data := &onboard.RowData{Dim: ck.Model.Dim}
	for _, c := range cells {
		data.Add(qa[r.Item[c]], r.Label[c])
	}
	post, err := ob.Posterior(data, prior)
	if err != nil {
		return onboard.Gaussian{}, nil, err
	}
	done := make([]bool, len(ids))
	for j, id := range ids {
		done[j] = answered[id]
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s answered %d questions (%d right); its row is fitted from them\n",
		a.answered, name, len(cells), correct)
	return post, done, nil
}

func init() { rootCmd.AddCommand(newAddModelCmd()) }
