package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// OnboardFile lists, in a checkpoint folder, the models add-model placed on it.
const OnboardFile = "onboard.json"

// OnboardSettings are how add-model placed models: from which responses, on
// which seeded fraction of each model's cells, under which prior.
type OnboardSettings struct {
	Responses string  `json:"responses"`
	Fraction  float64 `json:"fraction"`
	Seed      int64   `json:"seed"`
	Prior     string  `json:"prior"`
}

// OnboardEntry is one model of onboard.json: how it was added and how it scored.
type OnboardEntry struct {
	AddedModel
	OnboardSettings
	Added string `json:"added"` // RFC 3339, UTC
}

// ReadOnboardLog reads dir/onboard.json; a checkpoint without one has an
// empty log. Entries are kept as written (raw), so that fields a later
// jeirt adds survive a rewrite by this one.
func ReadOnboardLog(dir string) ([]json.RawMessage, error) {
	p := filepath.Join(dir, OnboardFile)
	b, err := fileio.ReadInputFile(p, fileio.MaxDocumentBytes, "an onboarding log")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var log []json.RawMessage
	if err := json.Unmarshal(b, &log); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return log, nil
}

// MarshalOnboardLog is the content of onboard.json: the entries, indented,
// with a final newline.
func MarshalOnboardLog(log []json.RawMessage) ([]byte, error) {
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CarryFiles are the extra files of the checkpoint add-model writes from the
// one in ckDir: its metrics.json and out-of-domain reference as they were,
// and its onboard.json with an entry for each model just added (placed as
// set says, at now).
func CarryFiles(ckDir string, added []AddedModel, set OnboardSettings, now time.Time) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{MetricsFile, DomainFile} {
		if b, err := fileio.ReadInputFile(filepath.Join(ckDir, name), fileio.MaxDocumentBytes, name); err == nil {
			files[name] = b
		}
	}
	log, err := ReadOnboardLog(ckDir)
	if err != nil {
		return nil, err
	}
	stamp := now.UTC().Format(time.RFC3339)
	for _, a := range added {
		b, err := json.Marshal(OnboardEntry{a, set, stamp})
		if err != nil {
			return nil, err
		}
		log = append(log, b)
	}
	if files[OnboardFile], err = MarshalOnboardLog(log); err != nil {
		return nil, err
	}
	return files, nil
}

// AddedModel reports one onboarded model.
type AddedModel struct {
	Name       string `json:"name"`
	Replaced   bool   `json:"replaced,omitempty"`
	FitCells   int    `json:"fit_cells"`
	HeldCells  int    `json:"held_cells"`
	Iterations int    `json:"iterations"`
	Converged  bool   `json:"converged"`
	// On the held-out cells (Fraction < 1): the new row, the per-model mean
	// baseline (the model's accuracy on its fit cells with add-one smoothing,
	// (correct+1)/(n+2), so that it is never certain) and, when the checkpoint already had the model, its
	// jointly trained row.
	Heldout   *model.Scores `json:"heldout,omitempty"`
	ModelMean *model.Scores `json:"model_mean,omitempty"`
	Joint     *model.Scores `json:"joint,omitempty"`
	// Score is the model's estimated score on all of the map's items, from
	// its fitted answers (absent in older files).
	Score *ScoreEstimate `json:"score,omitempty"`
}

// ScoreEstimate is a model's estimated score on Items items, Answered of
// them answered, with its 95% interval [Lo, Hi].
type ScoreEstimate struct {
	Items    int     `json:"items"`
	Answered int     `json:"answered"`
	Score    float64 `json:"score"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	// Residual is the answered items' mean leave-one-out residual (the
	// frozen map's misfit for this model), shrunk by its noise, that the
	// score adds to each unanswered item.
	Residual float64 `json:"residual"`
}
