// Package logtree walks a tree of evaluation-tool logs as a tree of
// untrusted names: the tree is the folder the user named (a symlink to it
// included: that is their argument), and nothing in it leads out of it. A
// symlink is followed only to a file or folder inside the tree that the
// walk does not reach at its own place (one in a hidden folder), and what
// it leads to is read once however many names lead there; a FIFO, a device or
// a socket is listed as skipped and never opened; a folder or file that
// cannot be read is listed with the reason; and the walk stops when the
// run's context is cancelled. Files named inside logs (an lm-eval task's
// samples file, a HELM run's files) are opened only after Check says they
// are regular files inside the tree.
package logtree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Tree is a folder of logs, or the folder of one log file named on its own.
type Tree struct {
	// Root is the folder as the user named it.
	Root string
	real string // Root with every symlink resolved
	ctx  context.Context
	seen map[string]string // real path of each file and folder reached, to the path it was reached by
}

// New returns the tree at root (a folder), read under ctx.
func New(ctx context.Context, root string) (*Tree, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return &Tree{Root: root, real: real, ctx: ctx, seen: map[string]string{real: root}}, nil
}

// Err is the context's error, wrapped to name where the read stopped.
func (t *Tree) Err(at string) error {
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", at, err)
	}
	return nil
}

// Context is the context the tree is read under.
func (t *Tree) Context() context.Context { return t.ctx }

// inside says whether the real path p is the tree's root or under it.
func (t *Tree) inside(p string) bool {
	if p == t.real {
		return true
	}
	root := t.real
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// Check says whether p, a path in the tree, may be opened as a log file:
// nil when it resolves to a regular file inside the tree; fs.ErrNotExist
// (wrapped) when there is none; else an error that says why not, naming p.
func (t *Tree) Check(p string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("%s cannot be read: %w", p, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return err
	}
	if !t.inside(real) {
		return fmt.Errorf("%s leads to %s, outside the tree %s: not followed (copy it into the tree, or name it on its own)", p, real, t.Root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %w", p, err)
	}
	if why := NotFile(fi.Mode()); why != "" {
		return fmt.Errorf("%s is %s: not opened (a log is a regular file)", p, why)
	}
	return nil
}

// NotFile names what a file of mode m is when it is not a regular file
// ("a FIFO (named pipe)", "a device", ...), "" for a regular file.
func NotFile(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

// Visit is called for each folder (descend: whether to walk into it) and
// each regular file the walk reaches.
type Visit func(p string, dir bool) (descend bool, err error)

// Skip is told each name the walk passes over, with the reason.
type Skip func(p, why string)

// Walk calls visit for the tree's root and every folder and regular file
// under it, in lexical order of the names, and skip for what it passes
// over: a symlink leading out of the tree or nowhere, a file or folder
// reached a second time (through a symlink), a special file, a folder that
// cannot be read. Folders whose names start with "." are passed over
// silently, as tools keep their own state there. It stops with the
// context's error when the run is cancelled, and with visit's error.
func (t *Tree) Walk(visit Visit, skip Skip) error {
	descend, err := visit(t.Root, true)
	if err != nil || !descend {
		return err
	}
	return t.walk(t.Root, t.real, visit, skip)
}

func (t *Tree) walk(dir, real string, visit Visit, skip Skip) error {
	if err := t.Err(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		skip(dir, fmt.Sprintf("a folder that cannot be read (%v): its logs are not read; make it readable (chmod +rx) or move it out of the tree", unwrapPath(err)))
		return nil
	}
	for _, e := range entries {
		if err := t.Err(dir); err != nil {
			return err
		}
		p, pReal := filepath.Join(dir, e.Name()), filepath.Join(real, e.Name())
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err == nil {
				target, err = filepath.Abs(target)
			}
			if err != nil {
				skip(p, fmt.Sprintf("a symlink that leads nowhere readable (%v): not followed", unwrapPath(err)))
				continue
			}
			if !t.inside(target) {
				skip(p, fmt.Sprintf("a symlink to %s, outside the tree %s: not followed (copy it into the tree, or name it on its own)", target, t.Root))
				continue
			}
			if at, walked := t.walked(target); walked {
				skip(p, fmt.Sprintf("a symlink to %s, inside the tree: read there, once", at))
				continue
			}
			fi, err := os.Stat(target)
			if err != nil {
				skip(p, fmt.Sprintf("a symlink to %s, which cannot be read (%v)", target, unwrapPath(err)))
				continue
			}
			mode, pReal = fi.Mode().Type(), target
		}
		switch {
		case mode.IsDir():
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if prev, ok := t.seen[pReal]; ok {
				skip(p, fmt.Sprintf("the same folder as %s (through a symlink): read once", prev))
				continue
			}
			t.seen[pReal] = p
			descend, err := visit(p, true)
			if err != nil {
				return err
			}
			if descend {
				if err := t.walk(p, pReal, visit, skip); err != nil {
					return err
				}
			}
		case mode.IsRegular():
			if prev, ok := t.seen[pReal]; ok {
				skip(p, fmt.Sprintf("the same file as %s (through a symlink): read once", prev))
				continue
			}
			t.seen[pReal] = p
			if _, err := visit(p, false); err != nil {
				return err
			}
		default:
			skip(p, NotFile(mode)+", not a log file: not opened")
		}
	}
	return nil
}

// walked says whether the walk reaches target, a real path inside the
// tree, at its own place (no folder on the way to it is hidden), and
// names it there.
func (t *Tree) walked(target string) (string, bool) {
	rel, err := filepath.Rel(t.real, target)
	if err != nil {
		return "", false
	}
	if rel != "." {
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			if strings.HasPrefix(part, ".") {
				return "", false
			}
		}
	}
	return filepath.Join(t.Root, rel), true
}

// unwrapPath is err without the path a *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
