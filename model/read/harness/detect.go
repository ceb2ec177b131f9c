package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jeirt/jeirt/model/read/harness/internal/logtree"
)

// What a file is to its tool.
const (
	kindLog       = iota + 1 // a log read on its own
	kindPart                 // part of a log read with another file (an lm-eval samples file, a file of a HELM run)
	kindZip                  // an inspect .eval log
	kindAggregate            // an Every Eval Ever aggregate
)

// helmRunFiles are the files of a HELM run folder.
var helmRunFiles = []string{"per_instance_stats.json", "run_spec.json", "scenario_state.json", "scenario.json", "stats.json",
	"instances.json", "display_predictions.json", "display_requests.json"}

// Detect says which tool wrote the log at path (a file, or a HELM run
// folder), "" when none of Tools did. A folder other than a HELM run is
// "" too: Read searches it.
func Detect(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		if isHELMRun(path) {
			return HELM
		}
		return ""
	}
	tool, _, _ := classify(path)
	return tool
}

// isHELMRun says whether dir is a HELM run folder.
func isHELMRun(dir string) bool {
	for _, f := range []string{"per_instance_stats.json", "run_spec.json"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// classify names the tool and kind of the file p by its name and, for a
// .json file, the first keys of its object; err when a file whose name a
// tool writes cannot be read (it is not guessed to be something else).
func classify(p string) (tool string, kind int, err error) {
	base := filepath.Base(p)
	switch {
	case strings.HasPrefix(base, "results_") && strings.HasSuffix(base, ".json"):
		if _, err := peek(p, 0); err != nil {
			return "", 0, err
		}
		return LMEval, kindLog, nil
	case strings.HasPrefix(base, "samples_") && strings.HasSuffix(base, ".jsonl"):
		if ok, err := firstLineHas(p, `"doc_id"`); !ok || err != nil {
			return "", 0, err
		}
		return LMEval, kindPart, nil
	case strings.HasSuffix(base, "_samples.jsonl"):
		if ok, err := firstLineHas(p, `"sample_id"`); !ok || err != nil {
			return "", 0, err
		}
		return EEE, kindLog, nil
	case strings.HasSuffix(base, ".eval"):
		head, err := peek(p, 4)
		if err != nil || !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			return "", 0, err
		}
		return Inspect, kindZip, nil
	}
	for _, f := range helmRunFiles {
		if base == f && isHELMRun(filepath.Dir(p)) {
			return HELM, kindPart, nil
		}
	}
	if strings.HasSuffix(base, ".json") {
		head, err := peek(p, 64<<10)
		if err != nil {
			return "", 0, err
		}
		tool, kind := jsonKind(head)
		return tool, kind, nil
	}
	return "", 0, nil
}

// firstLineHas says whether the first line of p (up to 1 MiB of it) holds
// key, or the file is empty: a JSON lines file of another kind (py-irt's)
// under a tool's name is not read as the tool's.
func firstLineHas(p, key string) (bool, error) {
	head, err := peek(p, 1<<20)
	if err != nil {
		return false, err
	}
	if k := bytes.IndexByte(head, '\n'); k >= 0 {
		head = head[:k]
	}
	return len(bytes.TrimSpace(head)) == 0 || bytes.Contains(head, []byte(key)), nil
}

// peek reads the first n bytes of the regular file p (a UTF-8 byte order
// mark passed over). It opens p without blocking and refuses what is not a
// regular file, so that a FIFO put where a log was is never waited on.
func peek(p string, n int) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if why := logtree.NotFile(fi.Mode()); why != "" {
		return nil, fmt.Errorf("%s, not a log file", why)
	}
	b := make([]byte, n+len(bom))
	k, err := io.ReadFull(f, b)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, unwrapPath(err)
	}
	b = bytes.TrimPrefix(b[:k], bom)
	return b[:min(n, len(b))], nil
}

// bom is UTF-8's byte order mark, which some editors put at the start of a
// file: JSON's RFC 8259 lets a reader pass over it, and jeirt does.
var bom = []byte("\xef\xbb\xbf")

// unwrapPath is err without the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// jsonKind tells an inspect log (its top-level keys version and status,
// then eval) and an Every Eval Ever aggregate (schema_version first, with
// evaluation_results) from other JSON by the first keys of the object.
func jsonKind(head []byte) (string, int) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", 0
	}
	for range 4 {
		t, err := dec.Token()
		if err != nil {
			return "", 0
		}
		key, _ := t.(string)
		switch key {
		case "eval":
			return Inspect, kindLog
		case "schema_version":
			if bytes.Contains(head, []byte(`"evaluation_results"`)) {
				return EEE, kindAggregate
			}
			return "", 0
		}
		v, err := dec.Token()
		if err != nil {
			return "", 0
		}
		if _, isDelim := v.(json.Delim); isDelim {
			return "", 0
		}
	}
	return "", 0
}
