package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jeirt train says once that it wrote its checkpoint, also when the
// baselines run after a first write of the trained model.
func TestTrainSaysWroteOnce(t *testing.T) {
	dir := t.TempDir()
	ck := svTrain(t, dir, "first", 1) // the data, and a checkpoint
	if err := os.RemoveAll(ck); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "first.yaml")
	out, log, err := runSplit(t, newTrainCmd(), "--config", cfg, "--set", "route.folds=0")
	if err != nil {
		t.Fatalf("train: %v\n%s", err, log)
	}
	all := out + log
	if n := strings.Count(all, "wrote "+ck); n != 1 || !strings.Contains(all, "running the baselines") {
		t.Errorf("%d lines say wrote %s:\n%s", n, ck, all)
	}
}
