package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train"
)

// onboardFile lists, in a checkpoint folder, the models added by add-model.
const onboardFile = "onboard.json"

func newAddModelCmd() *cobra.Command {
	var ro model.ReadOptions
	var opt train.AddModelsOptions
	var ckDir, responses, out, models, pool string
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
with weights at the mean model. The pool is the checkpoint's known items, or --pool (an
item-text CSV).`,
		Example: `  jeirt add-model --checkpoint runs/swe --responses new_model.csv --items new_items.csv
  jeirt add-model --checkpoint runs/swe --responses all.csv --models gpt-x --fraction 0.1 --seed 1
  jeirt add-model --checkpoint runs/swe --responses all.csv --models gpt-x --replace --fraction 0.5
  jeirt add-model --suggest 25 --checkpoint runs/swe --out ask-these.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ckDir == "" {
				return fmt.Errorf("add-model: --checkpoint is required")
			}
			if cmd.Flags().Changed("suggest") {
				if responses != "" {
					return fmt.Errorf("add-model: --suggest picks questions to ask; it takes no --responses")
				}
				return runSuggest(cmd, ckDir, pool, out, suggest, design, opt.Onboard)
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
			res, err := train.AddModels(cmd.Context(), ck, r, opt)
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
	cmd.Flags().StringVar(&models, "models", "", "comma-separated models of --responses to add (default: all)")
	cmd.Flags().Float64Var(&opt.Fraction, "fraction", 1, "fraction of each model's answers to fit on; the rest are scored")
	cmd.Flags().Int64Var(&opt.Seed, "seed", 42, "seed of the --fraction draw")
	cmd.Flags().StringVar(&out, "out", "", "new checkpoint folder (default DIR.plus-NAME); with --suggest, the items CSV (default stdout)")
	cmd.Flags().BoolVar(&opt.Replace, "replace", false, "refit models the checkpoint already has")
	cmd.Flags().StringVar(&opt.Prior, "prior", "population", "prior on the new row: population (mean and covariance of the known rows) or l2")
	cmd.Flags().Float64Var(&opt.Shrink, "shrink", 0.1, "population prior: ridge added to the covariance, relative to its mean variance")
	cmd.Flags().Float64Var(&opt.L2, "l2", 1, "l2 prior: precision of N(0, I/l2)")
	cmd.Flags().IntVar(&suggest, "suggest", 0, "suggest K questions to ask a new model instead of adding one")
	cmd.Flags().StringVar(&design, "design", "v-optimal", "with --suggest: v-optimal (least summed predictive variance) or d-optimal (largest log det)")
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
func defaultAddOut(ckDir string, added []train.AddedModel) string {
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
func carryFiles(ckDir string, added []train.AddedModel, opt train.AddModelsOptions, responses string) (map[string][]byte, error) {
	files := map[string][]byte{}
	if b, err := os.ReadFile(filepath.Join(ckDir, "metrics.json")); err == nil {
		files["metrics.json"] = b
	}
	type entry struct {
		train.AddedModel
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

func printAdded(w io.Writer, added []train.AddedModel) {
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
	cell := func(s *train.Scored) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f %.4f %.4f", s.Accuracy, s.AUC, s.LogLoss)
	}
	for _, a := range added {
		fmt.Fprintf(w, "%-32s %6d %6d  %-24s %-24s %-24s\n", a.Name, a.FitCells, a.HeldCells, cell(a.Heldout), cell(a.ModelMean), cell(a.Joint))
	}
}

func runSuggest(cmd *cobra.Command, ckDir, pool, out string, K int, design string, ob train.Onboard) error {
	pick := train.SuggestItemsV
	switch design {
	case "v-optimal":
	case "d-optimal":
		pick = train.SuggestItems
	default:
		return fmt.Errorf("add-model: --design %q: want v-optimal or d-optimal", design)
	}
	ck, err := model.LoadCheckpoint(ckDir)
	if err != nil {
		return err
	}
	m := ck.Model
	var ids, texts []string
	var q [][]float32
	if pool == "" {
		ids = m.Items
		texts = make([]string, len(ids))
		for j := range ids {
			q = append(q, m.ItemEmbedding(j))
		}
	} else {
		t, err := model.ReadItems(pool)
		if err != nil {
			return err
		}
		if len(t.IDs) == 0 {
			return fmt.Errorf("%s: no items", pool)
		}
		ids, texts = t.IDs, t.Text
		r := &model.Responses{Items: t.IDs, ItemText: t.Text}
		q, _, err = train.ItemEmbeddings(cmd.Context(), ck, r, nil, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
	}
	prior, err := ob.PriorFor(m)
	if err != nil {
		return err
	}
	picks, err := pick(cmd.Context(), m, q, K, prior)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"item_id", "text", "rank", "p_mean", "gain"})
		for k, s := range picks {
			cw.Write([]string{ids[s.Index], texts[s.Index], strconv.Itoa(k + 1),
				strconv.FormatFloat(s.P, 'f', 4, 64), strconv.FormatFloat(s.Gain, 'f', 4, 64)})
		}
		cw.Flush()
		return cw.Error()
	}
	if out == "" || out == "-" {
		return write(cmd.OutOrStdout())
	}
	if err := model.WriteFileAtomic(out, write); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d suggested questions to %s\n", len(picks), out)
	return nil
}

func init() { rootCmd.AddCommand(newAddModelCmd()) }
