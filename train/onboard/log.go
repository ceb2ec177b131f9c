package onboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/eval"
)

// LogFile lists, in a checkpoint folder, the models add-model placed on it.
const LogFile = "onboard.json"

// LogEntry is one model of onboard.json: how it was added and how it scored.
type LogEntry struct {
	AddedModel
	Responses string  `json:"responses"`
	Fraction  float64 `json:"fraction"`
	Seed      int64   `json:"seed"`
	Prior     string  `json:"prior"`
	Added     string  `json:"added"` // RFC 3339, UTC
}

// ReadLog reads dir/onboard.json; a checkpoint without one has an empty log.
// Entries are kept as written (raw), so that fields a later jeirt adds survive
// a rewrite by this one.
func ReadLog(dir string) ([]json.RawMessage, error) {
	p := filepath.Join(dir, LogFile)
	b, err := model.ReadInputFile(p, model.MaxDocumentBytes, "an onboarding log")
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

// MarshalLog is the content of onboard.json: the entries, indented, with a
// final newline.
func MarshalLog(log []json.RawMessage) ([]byte, error) {
	b, err := json.MarshalIndent(log, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CarryFiles are the extra files of the checkpoint add-model writes from the
// one in ckDir: its metrics.json as it was, and its onboard.json with an
// entry for each model just added (from responses, at now).
func CarryFiles(ckDir string, added []AddedModel, opt AddModelsOptions, responses string, now time.Time) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{eval.MetricsFile, model.DomainFile} {
		if b, err := model.ReadInputFile(filepath.Join(ckDir, name), model.MaxDocumentBytes, name); err == nil {
			files[name] = b
		}
	}
	log, err := ReadLog(ckDir)
	if err != nil {
		return nil, err
	}
	prior := opt.Prior
	if prior == "" {
		prior = "population"
	}
	stamp := now.UTC().Format(time.RFC3339)
	for _, a := range added {
		b, err := json.Marshal(LogEntry{a, responses, opt.Fraction, opt.Seed, prior, stamp})
		if err != nil {
			return nil, err
		}
		log = append(log, b)
	}
	if files[LogFile], err = MarshalLog(log); err != nil {
		return nil, err
	}
	return files, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultOut is the folder add-model writes by default: DIR.plus-NAME (one
// model) or DIR.plus-N-models, with -2, -3, ... appended until the name is
// free.
func DefaultOut(ckDir string, added []AddedModel) string {
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
