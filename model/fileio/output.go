package fileio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jeirt/jeirt/model"
)

// The output rule, the one every command's outputs go through:
//
//   - an output path that exists is refused unless the run has --force (an
//     empty folder counts as absent: nothing can be lost);
//   - --force replaces only what jeirt wrote: every output folder carries a
//     marker file (OutputMarker) naming the command, the version and the
//     files it wrote, and a folder without one, or holding anything else, is
//     refused with the list of the foreign files; a single-file output is
//     replaced only when it is a regular file;
//   - an output that is, contains or lies inside any input of the run is
//     refused before any work;
//   - paths are resolved (symlinks followed, "out/sub/.." taken the way the
//     system takes it) before any of these checks;
//   - a marker counts only in the folder it was written in (owner.go): a
//     copied or hand-written one does not make a folder jeirt's;
//   - temporary names carry tempTag, the process that made them and a random
//     suffix, and the clean-up of what a killed run left removes only those
//     whose process is gone (a folder only when its marker is its own).

// OutputMarker is the file jeirt writes into every output folder it makes.
const OutputMarker = ".jeirt-output.json"

// tempTag is part of the name of every temporary file or folder jeirt makes
// beside an output: ".NAME" + tempTag + "PID-NONCE-" + random (tempPrefix).
const tempTag = ".jeirt-tmp-"

// outputMarker is the marker's content.
type outputMarker struct {
	Jeirt   string `json:"jeirt"`   // the release that wrote the folder
	Command string `json:"command"` // the command that wrote it
	Written string `json:"written"` // when (RFC 3339, UTC)
	// InProgress marks a temporary folder being filled.
	InProgress bool `json:"in_progress,omitempty"`
	// Files are the files it wrote, as slash paths relative to the folder.
	Files []string `json:"files"`
	// Later are path.Match patterns of files jeirt adds to the folder after
	// it is written (a sweep's run logs and table).
	Later []string `json:"later,omitempty"`
	// ID is random per folder written; Folder is the absolute path it was
	// written for; Inode and MarkerInode are the identities of the folder
	// and of this file when written (checkOwn).
	ID          string `json:"id"`
	Folder      string `json:"folder"`
	Inode       uint64 `json:"inode,omitempty"`
	MarkerInode uint64 `json:"marker_inode,omitempty"`
}

// outputWriter names the command and release recorded in the markers of
// this process's outputs (SetOutputWriter).
var outputWriter = struct {
	sync.Mutex
	command, version string
}{command: "jeirt", version: "unknown"}

// SetOutputWriter sets the command ("jeirt irt fit") and the release that
// the markers of the folders written from now on name. The command line
// sets it before each command runs.
func SetOutputWriter(command, version string) {
	outputWriter.Lock()
	outputWriter.command, outputWriter.version = command, version
	outputWriter.Unlock()
}

// Output is one output path of a run, as CheckOutput judges it.
type Output struct {
	Path   string   // the file or folder as the user gave it
	Folder bool     // a folder (it will carry a marker) rather than one file
	Force  bool     // --force: an existing output that jeirt wrote may be replaced
	Inputs []string // every file or folder the run reads ("" entries are skipped)
	Others []string // the run's other outputs: none may hold another
	// Resumes says the run decides itself about an existing output, which
	// it only adds to (a sweep resumes its own folder; a replace still goes
	// through WriteDirAtomic): only the checks against inputs apply.
	Resumes bool
}

// OutputError is an output refused by the output rule. A message that
// names the force setting ({Force} in Msg; the command line's --force) is a
// model.FieldError on Force, which Unwrap gives.
type OutputError struct {
	Path    string   // the output as given
	Msg     string   // why, after the path
	Foreign []string // files in an existing folder that jeirt did not write
	More    bool     // Foreign is the start of a longer list
}

func (e *OutputError) Error() string {
	if fe := e.field(); fe != nil {
		return fe.Error()
	}
	return e.text()
}

// text is the message, {Force} left as it is.
func (e *OutputError) text() string {
	msg := e.Path + " " + e.Msg
	if len(e.Foreign) > 0 {
		list := strings.Join(e.Foreign, ", ")
		if e.More {
			list += ", ..."
		}
		msg = strings.Replace(msg, "{foreign}", list, 1)
	}
	return msg
}

// field is the error as a model.FieldError on Force, or nil when its
// message does not name the setting.
func (e *OutputError) field() *model.FieldError {
	if !strings.Contains(e.Msg, "{Force}") {
		return nil
	}
	return &model.FieldError{Field: "Force", Msg: e.text()}
}

// ErrOutputExists is what an OutputError for an existing output without
// Force wraps (errors.Is).
var ErrOutputExists = errors.New("output exists")

// Unwrap lets errors.Is(err, ErrOutputExists) find the plain "exists" case,
// and errors.As find the model.FieldError.
func (e *OutputError) Unwrap() []error {
	var errs []error
	if fe := e.field(); fe != nil {
		errs = append(errs, fe)
	}
	if strings.HasPrefix(e.Msg, existsMsg) {
		errs = append(errs, ErrOutputExists)
	}
	return errs
}

const existsMsg = "already exists"

func existsError(p string) error {
	return &OutputError{Path: p, Msg: existsMsg + "; pass {Force} to replace it (only what jeirt wrote is ever replaced), or choose another output"}
}

// CheckOutput applies the output rule to o before the run does any work,
// and returns the resolved path the run should write.
func CheckOutput(o Output) (string, error) {
	if o.Path == "" {
		return "", errors.New("no output path given")
	}
	out, err := ResolvePath(o.Path)
	if err != nil {
		return "", fmt.Errorf("output %s: %w", o.Path, err)
	}
	outInfo, outErr := os.Stat(out)
	for k, in := range append(append([]string(nil), o.Inputs...), o.Others...) {
		if in == "" {
			continue
		}
		rin, err := ResolvePath(in)
		if err != nil {
			continue // an input that cannot be resolved is reported by its reader
		}
		what := "an input"
		if k >= len(o.Inputs) {
			what = "another output"
		}
		same := rin == out
		if !same && outErr == nil {
			if inInfo, err := os.Stat(rin); err == nil && os.SameFile(inInfo, outInfo) {
				same = true
			}
		}
		switch {
		case same && what == "an input":
			return "", &OutputError{Path: o.Path, Msg: fmt.Sprintf("is an input of this run (%s): writing it would destroy the input; choose another output", in)}
		case same:
			return "", &OutputError{Path: o.Path, Msg: fmt.Sprintf("is also another output of this run (%s); give each output its own path", in)}
		case within(rin, out):
			return "", &OutputError{Path: o.Path, Msg: fmt.Sprintf("contains %s of this run (%s): writing it would destroy it; choose another output", what, in)}
		case within(out, rin):
			return "", &OutputError{Path: o.Path, Msg: fmt.Sprintf("lies inside %s of this run (%s); choose an output outside it", what, in)}
		}
	}
	if o.Resumes {
		return out, nil
	}
	if err := checkExisting(o.Path, out, o.Folder, o.Force); err != nil {
		return "", err
	}
	return out, nil
}

// checkExisting is the part of the rule about what is already at the
// resolved path out (given as p).
func checkExisting(p, out string, folder, force bool) error {
	fi, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", p, err)
	}
	if !folder {
		switch {
		case fi.IsDir():
			return &OutputError{Path: p, Msg: "is a folder; this output is one file: choose a file name"}
		case !fi.Mode().IsRegular():
			return &OutputError{Path: p, Msg: "is not a regular file (a device, a pipe or a socket): give a file name to write"}
		case !force:
			return existsError(p)
		}
		return nil
	}
	if !fi.IsDir() {
		return &OutputError{Path: p, Msg: "exists and is not a folder; refusing to replace it even with {Force}: choose another output"}
	}
	if empty, err := emptyDir(out); err == nil && empty {
		return nil
	}
	if !force {
		return existsError(p)
	}
	foreign, more, marked, err := foreignFiles(out)
	var notOwn *errNotOwn
	if errors.As(err, &notOwn) {
		return &OutputError{Path: p, Foreign: foreign, More: more,
			Msg: "was not written by this jeirt (" + notOwn.why + "; it holds {foreign}); refusing to replace it even with {Force}: move it away or choose another output"}
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", p, err)
	}
	if !marked {
		return &OutputError{Path: p, Foreign: foreign, More: more,
			Msg: "was not written by this jeirt (it has no " + OutputMarker + "; it holds {foreign}); refusing to replace it even with {Force}: move it away or choose another output"}
	}
	if len(foreign) > 0 {
		return &OutputError{Path: p, Foreign: foreign, More: more,
			Msg: "holds files jeirt did not write ({foreign}); refusing to replace it even with {Force}: move them out or choose another output"}
	}
	return nil
}

// within reports whether path a lies strictly inside folder b (both
// resolved and absolute).
func within(a, b string) bool {
	rel, err := filepath.Rel(b, a)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func emptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) == 0 && err != nil {
		return true, nil
	}
	return false, nil
}

// ResolvePath returns the absolute path p names, with every symlink
// followed and every ".." taken the way the system takes it (after the
// link before it is followed, so "out/link/.." is the folder holding the
// link's target). The part of p that does not exist yet is cleaned as text.
func ResolvePath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd + string(filepath.Separator) + p
	}
	sep := string(filepath.Separator)
	parts := strings.Split(p, sep)
	resolved := sep
	links := 0
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Nothing below exists, so no link can change what the rest means.
				return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > 255 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		parts = append(strings.Split(target, sep), parts[i+1:]...)
		i = -1
	}
	return resolved, nil
}

// maxForeignListed is how many foreign files an error lists.
const maxForeignListed = 10

// foreignFiles lists (up to maxForeignListed, more telling whether there
// are others) the entries of folder dir that jeirt did not write, as slash
// paths relative to dir. marked reports whether dir has a marker; without
// one, every entry is foreign. A marker that is not dir's own (checkOwn)
// gives every entry too, with its *errNotOwn as err.
func foreignFiles(dir string) (foreign []string, more, marked bool, err error) {
	m, err := readOwnMarker(dir)
	var notOwn *errNotOwn
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &notOwn) {
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			return nil, false, false, rerr
		}
		if notOwn != nil {
			err = notOwn
		} else {
			err = nil
		}
		for _, e := range entries {
			if len(foreign) == maxForeignListed {
				return foreign, true, false, err
			}
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			foreign = append(foreign, name)
		}
		return foreign, false, false, err
	}
	if err != nil {
		return nil, false, false, err
	}
	stop := errors.New("enough")
	err = walkForeign(dir, "", m, func(rel string) error {
		if len(foreign) == maxForeignListed {
			more = true
			return stop
		}
		foreign = append(foreign, rel)
		return nil
	})
	if err != nil && err != stop {
		return nil, false, true, err
	}
	return foreign, more, true, nil
}

// walkForeign calls found for every entry of dir (a folder whose marker is
// m; rel is its path from the top) that m does not own. A sub-folder with a
// marker of its own is judged by that marker.
func walkForeign(dir, rel string, m *outputMarker, found func(string) error) error {
	owned := map[string]bool{}
	for _, f := range m.Files {
		owned[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			owned[d+"/"] = true
		}
	}
	owns := func(p string) bool {
		if owned[p] {
			return true
		}
		for _, pat := range m.Later {
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
		}
		return false
	}
	return filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if full == dir {
			return nil
		}
		r, _ := filepath.Rel(dir, full)
		r = filepath.ToSlash(r)
		if r == OutputMarker {
			return nil
		}
		if d.IsDir() {
			if sub, err := readOwnMarker(full); err == nil {
				if _, pid, nonce, ok := tempOwner(d.Name()); ok && tempOwnerGone(pid, nonce) {
					return filepath.SkipDir // a temporary folder a killed run left
				}
				if err := walkForeign(full, rel+r+"/", sub, found); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			if owned[r+"/"] || laterUnder(m.Later, r) {
				return nil
			}
			if err := found(rel + r + "/"); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		if owns(r) || ownedTemp(r, owns) {
			return nil
		}
		return found(rel + r)
	})
}

// laterUnder reports whether a pattern of later files may match a file in
// folder r.
func laterUnder(later []string, r string) bool {
	depth := strings.Count(r, "/") + 1
	for _, pat := range later {
		parts := strings.Split(pat, "/")
		if len(parts) <= depth {
			continue
		}
		if ok, _ := path.Match(strings.Join(parts[:depth], "/"), r); ok {
			return true
		}
	}
	return false
}

// ownedTemp reports whether r is the lock file or a temporary file of an
// entry that jeirt owns (what a killed run leaves beside it): the lock is
// ".NAME.jeirt-lock", a temporary ".NAME.jeirt-tmp-PID-NONCE-RANDOM" whose
// process is gone. A user's ".NAME.lock" is not jeirt's.
func ownedTemp(r string, owns func(string) bool) bool {
	dir, base := path.Split(r)
	if !strings.HasPrefix(base, ".") {
		return false
	}
	if n, ok := strings.CutSuffix(base[1:], lockSuffix); ok && n != "" {
		return owns(dir+n) || owns(dir+n+"/")
	}
	if n, pid, nonce, ok := tempOwner(base); ok && tempOwnerGone(pid, nonce) {
		return owns(dir+n) || owns(dir+n+"/")
	}
	return false
}

// ownsPath reports whether the marker m lists the file rel (a slash path)
// among its files or its later patterns.
func ownsPath(m *outputMarker, rel string) bool {
	if slices.Contains(m.Files, rel) {
		return true
	}
	for _, pat := range m.Later {
		if ok, _ := path.Match(pat, rel); ok {
			return true
		}
	}
	return false
}

// readMarker reads the marker of folder dir. It is jeirt's own small
// file, read whether or not the run is being cancelled (a run stopped by
// Ctrl-C still writes what it kept), never through a link and never
// waiting on a FIFO: a marker that is not a regular file is not the
// folder's own (*errNotOwn).
func readMarker(dir string) (*outputMarker, error) {
	p := filepath.Join(dir, OutputMarker)
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
			return nil, &errNotOwn{"its " + OutputMarker + " is not a regular file"}
		}
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &errNotOwn{"its " + OutputMarker + " is not a regular file"}
	}
	const maxMarker = 64 << 20
	b, err := io.ReadAll(io.LimitReader(f, maxMarker+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(b) > maxMarker {
		return nil, &errNotOwn{"its " + OutputMarker + " is larger than any jeirt writes"}
	}
	m := &outputMarker{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, &errNotOwn{fmt.Sprintf("its %s is not a jeirt marker (%v)", OutputMarker, err)}
	}
	return m, nil
}

// writeMarker writes the marker of folder dir, which is being built for the
// output folder final with the marker id: the files now in it (a sub-folder
// with its own marker stands for itself), and later. It records the
// identities of dir and of the marker file (checkOwn), which a rename into
// place keeps.
func writeMarker(dir, final, id string, inProgress bool, later []string) error {
	outputWriter.Lock()
	m := outputMarker{Jeirt: outputWriter.version, Command: outputWriter.command,
		Written: time.Now().UTC().Format(time.RFC3339), InProgress: inProgress, Files: []string{}, Later: later,
		ID: id, Folder: final}
	outputWriter.Unlock()
	if !inProgress {
		err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
			if err != nil || full == dir {
				return err
			}
			r, _ := filepath.Rel(dir, full)
			r = filepath.ToSlash(r)
			if d.IsDir() {
				if _, err := readOwnMarker(full); err == nil {
					return filepath.SkipDir
				}
				return nil
			}
			if r != OutputMarker {
				m.Files = append(m.Files, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.Sort(m.Files)
	}
	f, err := os.OpenFile(filepath.Join(dir, OutputMarker), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|noFollow, 0o644)
	if err != nil {
		return err
	}
	dfi, derr := os.Lstat(dir)
	ffi, ferr := f.Stat()
	if derr != nil || ferr != nil {
		f.Close()
		return errors.Join(derr, ferr)
	}
	m.Inode, m.MarkerInode = fileID(dfi), fileID(ffi)
	b, err := json.MarshalIndent(&m, "", "  ")
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	return errors.Join(err, f.Close())
}
