package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jeirt/jeirt/model/interrupt"
)

// cancelOn is a log writer that cancels when a line starts with prefix.
type cancelOn struct {
	mu     sync.Mutex
	b      bytes.Buffer
	prefix string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.HasPrefix(p, []byte(c.prefix)) {
		c.cancel()
	}
	return c.b.Write(p)
}

// Ctrl-C during irt fit --bootstrap writes the fit and the replicates done,
// and says so in fit.json and on the terminal (it used to write nothing).
func TestIRTFitBootstrapInterrupted(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "r.csv")
	writeTinyResponses(t, data, 30, 60, 2)
	out := filepath.Join(dir, "fit")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &cancelOn{prefix: "bootstrap: 25 of 100", cancel: cancel}
	cmd := newIRTCmd()
	var stdout bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(log)
	cmd.SetArgs([]string{"fit", "--data", data, "--bootstrap", "100", "--threads", "1", "--out", out})
	err := cmd.ExecuteContext(ctx)
	var kept *interrupt.Error
	if !errors.As(err, &kept) || !errors.Is(err, context.Canceled) ||
		err.Error() != "interrupted; wrote "+out+" with the fit and 25 of 100 bootstrap replicates; fit.json says interrupted: true and bootstrap_completed" {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(log.b.String(), "bootstrap "+data+": interrupted after 25 of 100 replicates") || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Errorf("log:\n%s\nstdout:\n%s", log.b.String(), stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted        bool
		BootstrapCompleted *int `json:"bootstrap_completed"`
		Settings           struct{ Bootstrap int }
	}
	if err := json.Unmarshal(b, &doc); err != nil || !doc.Interrupted || doc.BootstrapCompleted == nil || *doc.BootstrapCompleted != 25 || doc.Settings.Bootstrap != 100 {
		t.Errorf("fit.json: %v %+v", err, doc)
	}
	rows := readCSVFile(t, filepath.Join(out, "abilities.csv"))
	if rows[0][2] != "se" || rows[1][2] == "" {
		t.Errorf("abilities.csv has no bootstrap SE: %v", rows[:2])
	}
	// A complete bootstrap says bootstrap_completed too, and no interruption.
	if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--bootstrap", "4", "--threads", "1", "--out", out, "--force"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(out, "fit.json"))
	doc.Interrupted, doc.BootstrapCompleted = false, nil
	if err := json.Unmarshal(b, &doc); err != nil || doc.Interrupted || doc.BootstrapCompleted == nil || *doc.BootstrapCompleted != 4 {
		t.Errorf("complete fit.json: %v %+v", err, doc)
	}
}
