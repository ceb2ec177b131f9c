package model

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes path by calling write on a temporary file in the same
// folder and renaming it into place only when write and the flush succeed, so a
// failed or interrupted run never leaves a half-written file.
func WriteFileAtomic(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file private (0600); outputs are ordinary files.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteDirAtomic builds a folder by calling fill on a temporary sibling folder
// and renaming it to dir when fill succeeds. An existing dir is replaced only
// when replace is true; otherwise it is an error.
func WriteDirAtomic(dir string, replace bool, fill func(tmp string) error) (err error) {
	if _, statErr := os.Stat(dir); statErr == nil && !replace {
		return fmt.Errorf("%s already exists (choose another output folder)", dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	// MkdirTemp makes the folder private (0700); outputs are ordinary folders.
	if err = os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err = fill(tmp); err != nil {
		return err
	}
	if replace {
		old := tmp + ".old"
		if _, statErr := os.Stat(dir); statErr == nil {
			if err = os.Rename(dir, old); err != nil {
				return err
			}
			defer os.RemoveAll(old)
		}
	}
	return os.Rename(tmp, dir)
}
