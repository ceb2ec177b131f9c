package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/onboard"
)

// SweepLocalOptions control RunLocal.
type SweepLocalOptions struct {
	Log     io.Writer // progress of every run, each line prefixed "[run NNN] "; nil discards
	Version string    // the jeirt release, written into each checkpoint
	Force   bool      // train runs again even when they are already done
}

// RunDone reports whether run folder runDir holds a finished run: a
// checkpoint whose metrics.json does not say it was interrupted.
func RunDone(runDir string) bool {
	m, err := eval.ReadRunMetrics(filepath.Join(runDir, "checkpoint"))
	return err == nil && !m.Interrupted
}

// RunLocal trains the runs of an emitted sweep folder one after another in
// this process, each from its runs/NNN/config.yaml (the file a Slurm task
// would read), logging to runs/NNN/train.log as well as opt.Log. Finished runs
// are skipped unless opt.Force, so a stopped sweep resumes. A failed run is
// reported and the next one started; cancelling ctx stops the sweep (the run
// in progress keeps its best epoch, marked interrupted).
func (s *Sweep) RunLocal(ctx context.Context, dir string, runs []SweepRun, opt SweepLocalOptions) error {
	out := opt.Log
	if out == nil {
		out = io.Discard
	}
	var failed []string
	start := time.Now()
	for k, r := range runs {
		runDir := filepath.Join(dir, "runs", r.ID)
		if !opt.Force && RunDone(runDir) {
			fmt.Fprintf(out, "sweep: run %s (%s) is already done; skipping\n", r.ID, FormatSettings(r.Settings))
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(out, "sweep: run %s, %d of %d (%s), %s elapsed\n", r.ID, k+1, len(runs), FormatSettings(r.Settings), time.Since(start).Round(time.Second))
		err := s.runOne(ctx, runDir, r.ID, out, opt)
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return fmt.Errorf("sweep: stopped during run %s: %w", r.ID, context.Canceled)
			}
			fmt.Fprintf(out, "sweep: run %s failed: %v\n", r.ID, err)
			failed = append(failed, r.ID)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("sweep: stopped after run %s: %w", r.ID, context.Canceled)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("sweep: %d of %d runs failed (%s); see runs/NNN/train.log", len(failed), len(runs), strings.Join(failed, ", "))
	}
	return nil
}

func (s *Sweep) runOne(ctx context.Context, runDir, id string, out io.Writer, opt SweepLocalOptions) (err error) {
	cfg, err := jeirt.LoadConfig(filepath.Join(runDir, "config.yaml"))
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(runDir, "train.log"))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := logFile.Close(); err == nil {
			err = cerr
		}
	}()
	pw := &prefixWriter{w: out, prefix: "[run " + id + "] "}
	defer pw.Flush()
	log := io.MultiWriter(pw, logFile)
	_, err = jeirt.RunJEIRT(ctx, cfg, jeirt.RunOptions{Log: log, Version: opt.Version, Replace: true, NoBaselines: !s.Baselines,
		Onboard: onboard.HeldOut})
	if err != nil {
		fmt.Fprintf(logFile, "error: %v\n", err)
	}
	return err
}

// prefixWriter starts every line written to w with prefix. It is safe for
// concurrent use (progress may come from worker goroutines).
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", p.prefix, p.partial[:i+1]); err != nil {
			return 0, err
		}
		p.partial = p.partial[i+1:]
	}
	return n, nil
}

// Flush writes a last unterminated line.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.partial)
		p.partial = nil
	}
}
