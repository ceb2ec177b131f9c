package onboardrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/onboard"
)

// AddRun is jeirt add-model: it places the models of a responses file on a
// checkpoint (AddModels) and writes the new checkpoint. The zero value needs
// Checkpoint and Data.
type AddRun struct {
	Checkpoint string // input checkpoint folder (never modified)
	Encoder    string // encoder override ("": the recorded one)
	Data       string // responses of the new models
	Read       read.Options
	Out        string // new checkpoint folder ("": checkpoint.OnboardedDir)
	Force      bool   // replace Out when it is a checkpoint jeirt wrote
	Options    onboard.AddModelsOptions
	Version    string // the jeirt release, written into the manifest
}

// Run adds the models and writes the checkpoint; it returns the folder
// written and the result.
func (a AddRun) Run(ctx context.Context) (string, *onboard.AddModelsResult, error) {
	if err := checkNumbers(a.Options.Onboard, a.Options.Fraction); err != nil {
		return "", nil, err
	}
	ck, err := checkpoint.Open(a.Checkpoint, a.Encoder, a.Options.Log)
	if err != nil {
		return "", nil, err
	}
	r, _, err := read.File(a.Data, a.Read)
	if err != nil {
		return "", nil, err
	}
	res, err := onboard.AddModels(ctx, ck, r, a.Options)
	if err != nil {
		return "", nil, err
	}
	out := a.Out
	if out == "" {
		out = checkpoint.OnboardedDir(a.Checkpoint, addedNames(res.Added))
	}
	nc := res.Checkpoint
	nc.Manifest.JEIRTVersion = a.Version
	now := time.Now()
	nc.Manifest.Created = now.UTC().Format(time.RFC3339)
	set := checkpoint.OnboardSettings{Responses: a.Data, Fraction: a.Options.Fraction, Seed: a.Options.Seed, Prior: a.Options.WithDefaults().Prior}
	if nc.Files, err = checkpoint.CarryFiles(a.Checkpoint, res.Added, set, now); err != nil {
		return "", nil, err
	}
	return out, res, nc.Write(out, a.Force && a.Out != "")
}

// WriteAdded prints what AddRun did: as indented JSON, or as one line per
// model (a table of held-out scores when some were held out) and the
// "wrote" line.
func WriteAdded(w io.Writer, out string, res *onboard.AddModelsResult, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"checkpoint": out, "new_items": res.NewItems, "models": res.Added})
	}
	held, width := false, 32
	for _, a := range res.Added {
		held = held || a.Heldout != nil
		width = max(width, len(a.Name))
	}
	if !held {
		for _, a := range res.Added {
			verb := "added"
			if a.Replaced {
				verb = "refitted"
			}
			fmt.Fprintf(w, "%s %s from %d answers (Newton %d iterations)%s\n", verb, a.Name, a.FitCells, a.Iterations, scoreText(a.Score))
		}
	} else {
		fmt.Fprintf(w, "%-*s %6s %6s  %-24s %-24s %-24s\n", width, "model", "fit", "held", "new row acc/AUC/logloss", "model mean", "joint (checkpoint row)")
		cell := func(s *model.Scores) string {
			if s == nil {
				return "-"
			}
			return fmt.Sprintf("%.4f %.4f %.4f", s.Accuracy, s.AUC, s.LogLoss)
		}
		var notes []string
		for _, a := range res.Added {
			fmt.Fprintf(w, "%-*s %6d %6d  %-24s %-24s %-24s%s\n", width, a.Name, a.FitCells, a.HeldCells, cell(a.Heldout), cell(a.ModelMean), cell(a.Joint), scoreText(a.Score))
			if a.Heldout != nil {
				if why := a.Heldout.Undefined(); why != "" && !slices.Contains(notes, a.Name+": "+why) {
					notes = append(notes, a.Name+": "+why)
				}
			}
		}
		for _, why := range notes {
			fmt.Fprintf(w, "n/a: %s\n", why)
		}
	}
	nc := res.Checkpoint
	_, err := fmt.Fprintf(w, "wrote %s (%d models, %d items; %d items new)\n", out, nc.Model.NumModels(), nc.Model.NumItems(), res.NewItems)
	return err
}

// SuggestRun is jeirt add-model suggest: one Round on a checkpoint, its
// picks written as an items CSV. The zero value needs Checkpoint and K.
type SuggestRun struct {
	onboard.Round
	Checkpoint string
	Encoder    string
	PoolFile   string // item-text file of candidates ("": the checkpoint's items)
	Read       read.Options
	Out        string // items CSV ("" or "-": w)
}

// Run reads the pool and the answers, suggests, and writes the picks.
func (s SuggestRun) Run(ctx context.Context, w io.Writer) error {
	if err := s.Check(); err != nil {
		return err
	}
	if err := checkNumbers(s.Onboard, 0); err != nil {
		return err
	}
	log := s.Log
	ck, err := checkpoint.Open(s.Checkpoint, s.Encoder, log)
	if err != nil {
		return err
	}
	if s.PoolFile != "" {
		if s.Pool, err = read.Items(s.PoolFile); err != nil {
			return err
		}
		if len(s.Pool.IDs) == 0 {
			return fmt.Errorf("%s: no items", s.PoolFile)
		}
	}
	if s.AnsweredFile != "" {
		if s.Answered, _, err = read.File(s.AnsweredFile, s.Read); err != nil {
			return err
		}
	}
	res, err := s.Suggest(ctx, ck)
	if err != nil {
		return err
	}
	if res.Model != "" {
		log.Printf("%s: %s answered %d questions (%d right); its row is fitted from them",
			s.AnsweredFile, res.Model, res.Answers, res.AnsRight)
	}
	if s.Out == "" || s.Out == "-" {
		return res.WriteCSV(w)
	}
	if err := fileio.WriteFileAtomic(s.Out, res.WriteCSV); err != nil {
		return err
	}
	log.Printf("wrote %d suggested questions to %s", len(res.Picks), s.Out)
	return nil
}

func addedNames(added []checkpoint.AddedModel) []string {
	names := make([]string, len(added))
	for k, a := range added {
		names[k] = a.Name
	}
	return names
}

// scoreText is "; score on all J items S [lo, hi] (n answered, map
// residual ±r)" (nothing without one).
func scoreText(s *checkpoint.ScoreEstimate) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("; score on all %d items %.4f [%.4f, %.4f] (%d answered, map residual %+.4f)", s.Items, s.Score, s.Lo, s.Hi, s.Answered, s.Residual)
}
