package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	tool, _ := classify(path)
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
// .json file, the first keys of its object.
func classify(p string) (tool string, kind int) {
	base := filepath.Base(p)
	switch {
	case strings.HasPrefix(base, "results_") && strings.HasSuffix(base, ".json"):
		return LMEval, kindLog
	case strings.HasPrefix(base, "samples_") && strings.HasSuffix(base, ".jsonl") && firstLineHas(p, `"doc_id"`):
		return LMEval, kindPart
	case strings.HasSuffix(base, "_samples.jsonl") && firstLineHas(p, `"sample_id"`):
		return EEE, kindLog
	case strings.HasSuffix(base, ".eval"):
		if head := peek(p, 4); bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			return Inspect, kindZip
		}
		return "", 0
	}
	for _, f := range helmRunFiles {
		if base == f && isHELMRun(filepath.Dir(p)) {
			return HELM, kindPart
		}
	}
	if strings.HasSuffix(base, ".json") {
		return jsonKind(peek(p, 64<<10))
	}
	return "", 0
}

// firstLineHas says whether the first line of p (up to 1 MiB of it) holds
// key, or the file is empty: a JSON lines file of another kind (py-irt's)
// under a tool's name is not read as the tool's.
func firstLineHas(p, key string) bool {
	head := peek(p, 1<<20)
	if k := bytes.IndexByte(head, '\n'); k >= 0 {
		head = head[:k]
	}
	return len(bytes.TrimSpace(head)) == 0 || bytes.Contains(head, []byte(key))
}

func peek(p string, n int) []byte {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := io.ReadFull(f, b)
	return b[:k]
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
