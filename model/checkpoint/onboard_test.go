package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// onboard.json grows by one entry per model added; what is read back is what
// was written, and entries of an older file are kept as they were.
func TestLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if log, err := ReadOnboardLog(dir); err != nil || log != nil {
		t.Fatalf("no onboard.json: %v %v", log, err)
	}
	os.WriteFile(filepath.Join(dir, MetricsFile), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, OnboardFile), []byte(`[{"name": "old", "future_field": 1}]`), 0o644)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	added := []AddedModel{{Name: "new-a", FitCells: 10}, {Name: "new-b", Replaced: true}}
	files, err := CarryFiles(dir, added, OnboardSettings{Responses: "r.csv", Fraction: 0.5, Seed: 3, Prior: "population"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if string(files[MetricsFile]) != "{}\n" {
		t.Errorf("metrics.json carried as %q", files[MetricsFile])
	}
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, OnboardFile), files[OnboardFile], 0o644)
	log, err := ReadOnboardLog(out)
	if err != nil || len(log) != 3 {
		t.Fatalf("%d entries, %v", len(log), err)
	}
	var old map[string]any
	json.Unmarshal(log[0], &old)
	if old["future_field"] != 1.0 {
		t.Errorf("old entry %s", log[0])
	}
	var e OnboardEntry
	if err := json.Unmarshal(log[2], &e); err != nil || e.Name != "new-b" || !e.Replaced || e.Responses != "r.csv" ||
		e.Fraction != 0.5 || e.Prior != "population" || e.Added != "2026-01-02T03:04:05Z" {
		t.Errorf("entry %s: %+v %v", log[2], e, err)
	}
	again, _ := MarshalOnboardLog(log)
	if string(again) != string(files[OnboardFile]) {
		t.Errorf("written again:\n%s\nfirst:\n%s", again, files[OnboardFile])
	}
}
