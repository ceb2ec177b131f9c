package sweeprun

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/slurm"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
)

// A sweep folder's marker names the files jeirt adds later by pattern
// (SweepLaterFiles): the table, each run's train.log and Slurm logs. A
// file matching a pattern counts as jeirt's only when it is what jeirt
// writes there: the table starts with its header, a train.log with the
// line runOne writes first, a Slurm log belongs to a job of the folder
// (slurm.OwnsLog). --force replaces a folder only when every such file is
// jeirt's, so a user's notes named sweep.csv or slurm-1_1.out survive.

var sweepLogRE = regexp.MustCompile(`^slurm-([0-9]+)_([0-9]+)\.out$`)

// trainLogBanner is the first line of a run's train.log, written by runOne.
func trainLogBanner(id string) string { return "sweep: run " + id + " here" }

// notJeirts lists, as slash paths relative to dir, the files of the sweep
// folder dir that match SweepLaterFiles but that jeirt did not write.
func notJeirts(dir string) []string {
	var foreign []string
	if _, err := os.Lstat(filepath.Join(dir, SweepTableFile)); err == nil && !isSweepTable(filepath.Join(dir, SweepTableFile)) {
		foreign = append(foreign, SweepTableFile)
	}
	runs, _ := os.ReadDir(filepath.Join(dir, "runs"))
	ids := slurm.JobIDs(dir)
	for _, r := range runs {
		if !r.IsDir() {
			continue
		}
		task, err := strconv.Atoi(r.Name())
		if err != nil {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(dir, "runs", r.Name()))
		for _, e := range entries {
			p := filepath.Join(dir, "runs", r.Name(), e.Name())
			rel := "runs/" + r.Name() + "/" + e.Name()
			switch {
			case e.Name() == "train.log":
				if !firstLineHasPrefix(p, trainLogBanner(r.Name())) {
					foreign = append(foreign, rel)
				}
			case strings.HasPrefix(e.Name(), "slurm-") && strings.HasSuffix(e.Name(), ".out"):
				m := sweepLogRE.FindStringSubmatch(e.Name())
				if m == nil || m[2] != strconv.Itoa(task) || !slurm.OwnsLog(p, m[1], ids, "sweep: run "+r.Name()+" ") {
					foreign = append(foreign, rel)
				}
			}
		}
	}
	return foreign
}

// isSweepTable reports whether p is a table jeirt sweep collect wrote: a
// plain file whose header is a sweep table's.
func isSweepTable(p string) bool {
	line, ok := firstLine(p)
	return ok && strings.HasPrefix(line, "run,") && strings.HasSuffix(line, ",best_epoch,epochs_run,seconds_per_epoch,checkpoint")
}

// firstLineHasPrefix reports whether the plain file p starts with prefix.
func firstLineHasPrefix(p, prefix string) bool {
	line, ok := firstLine(p)
	return ok && strings.HasPrefix(line, prefix)
}

// firstLine is the first line of the plain file p (at most 64 KiB of it,
// without its line end); false when p is not a plain file or cannot be
// read. A FIFO or a device is never opened.
func firstLine(p string) (string, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<16)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", false
	}
	return strings.TrimRight(line, "\r\n"), true
}

// checkReplace refuses --force over the sweep folder dir when a file
// there that looks like jeirt's is not (notJeirts).
func checkReplace(given, dir string) error {
	if foreign := notJeirts(dir); len(foreign) > 0 {
		return model.FieldErrorf("Force", "%s holds files jeirt did not write (%s), though their names look like jeirt's; {Force} replaces only what jeirt wrote: move them out of the folder or choose another {Out}",
			given, strings.Join(foreign, ", "))
	}
	return nil
}

// checkRewrite refuses to rewrite the file name of the sweep folder dir
// (a re-emit's sweep.json or sweep.sbatch) when the folder is not one
// jeirt wrote (a copy, cp -a) and the file there differs from what jeirt
// writes now: a user's edited script in a copy is theirs.
func checkRewrite(given, dir, name string, b []byte) error {
	p := filepath.Join(dir, name)
	old, err := os.ReadFile(p)
	if err != nil || bytes.Equal(old, b) {
		return nil
	}
	if err := fileio.CheckOwned(dir, name); err != nil {
		return fmt.Errorf("%s differs from what jeirt writes there, and jeirt replaces only what it wrote: %w. Move %s aside to have it written again, or emit the sweep into a new folder",
			p, err, name)
	}
	return nil
}
