package sweeprun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/sweep"
)

// SweepLocalOptions control RunLocal.
type SweepLocalOptions struct {
	Log     progress.Logf // progress of every run, each line prefixed "[run NNN] "; nil is silent
	Version string        // the jeirt release, written into each checkpoint
	Force   bool          // train runs again even when they are already done
}

// RunDone reports whether run folder runDir holds a finished run: a
// checkpoint whose metrics.json does not say it was interrupted.
func RunDone(runDir string) bool {
	m, err := checkpoint.ReadRunMetrics(filepath.Join(runDir, "checkpoint"))
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
	var failed []string
	start := time.Now()
	for k, r := range runs {
		runDir := filepath.Join(dir, "runs", r.ID)
		if !opt.Force && RunDone(runDir) {
			out.Printf("sweep: run %s (%s) is already done; skipping", r.ID, sweep.FormatSettings(r.Settings))
			continue
		}
		if ctx.Err() != nil {
			return &StoppedError{ID: r.ID}
		}
		out.Printf("sweep: run %s, %d of %d (%s), %s elapsed", r.ID, k+1, len(runs), sweep.FormatSettings(r.Settings), time.Since(start).Round(time.Second))
		err := s.runOne(ctx, runDir, r.ID, out, opt)
		if err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return &StoppedError{ID: r.ID, During: true}
			}
			out.Printf("sweep: run %s failed: %v", r.ID, err)
			failed = append(failed, r.ID)
		}
		if ctx.Err() != nil {
			// A run that returns no error when interrupted kept its best epoch.
			return &StoppedError{ID: r.ID, During: true}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("sweep: %d of %d runs failed (%s); see runs/NNN/train.log", len(failed), len(runs), strings.Join(failed, ", "))
	}
	return nil
}

func (s *Sweep) runOne(ctx context.Context, runDir, id string, out progress.Logf, opt SweepLocalOptions) (err error) {
	cfg, err := pipeline.LoadConfig(filepath.Join(runDir, "config.yaml"))
	if err != nil {
		return err
	}
	logPath := filepath.Join(runDir, "train.log")
	if fi, err := os.Lstat(logPath); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a plain file (a link or a special file); jeirt writes the run's log there: remove it", logPath)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	// The first line says the file is jeirt's (notJeirts).
	fmt.Fprintf(logFile, "%s (jeirt %s)\n", trainLogBanner(id), opt.Version)
	defer func() {
		if cerr := logFile.Close(); err == nil {
			err = cerr
		}
	}()
	// Each line goes to train.log and, prefixed with the run, to out; the
	// results table comes as one text of several lines. Progress may come
	// from worker goroutines.
	var mu sync.Mutex
	log := func(format string, args ...any) {
		text := fmt.Sprintf(format, args...)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(logFile, text)
		if out != nil {
			for _, line := range strings.Split(text, "\n") {
				out("[run %s] %s", id, line)
			}
		}
	}
	results := func(stop string, m *checkpoint.RunMetrics) {
		var b strings.Builder
		pipeline.PrintScoreTable(&b, m)
		log("stopped: %s\n%s", stop, strings.TrimSuffix(b.String(), "\n"))
	}
	_, err = pipeline.Run(ctx, cfg, pipeline.Options{Log: log, Results: results, Version: opt.Version, Replace: true,
		NoBaselines: !s.Baselines})
	if err != nil {
		fmt.Fprintf(logFile, "error: %v\n", err)
	}
	return err
}
