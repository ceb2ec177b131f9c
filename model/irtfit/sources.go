package irtfit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
)

// RecordSources makes the settings' data and items paths absolute and
// records the SHA-256 of each data file, so that a command that reads them
// again (irt select, analyze icc) reads the same file from any folder and
// knows when its bytes are no longer the ones fitted. A relative path read
// from another folder named another file (another data/responses.csv)
// and was scored without a word. Write adds each path from the fit folder.
func (s *Settings) RecordSources() error {
	var err error
	if s.Items, err = absPath(s.Items); err != nil {
		return err
	}
	if s.Joint {
		s.JointSHA256 = make([]string, len(s.JointData))
		for k, p := range s.JointData {
			if s.JointData[k], err = absPath(p); err != nil {
				return err
			}
			if s.JointSHA256[k], err = fileSHA256(s.JointData[k]); err != nil {
				return err
			}
		}
		s.Data = strings.Join(s.JointData, ",")
		return nil
	}
	if s.Data, err = absPath(s.Data); err != nil {
		return err
	}
	s.DataSHA256, err = fileSHA256(s.Data)
	return err
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

// fromFit sets the paths from the fit folder dir to the data and items
// files recorded absolute. Write calls it with the folder it writes in,
// which is the fit's or, under fileio.WriteDirAtomic, a sibling renamed
// into place: the same path from either.
func (s *Settings) fromFit(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	rel := func(p string) string {
		if !filepath.IsAbs(p) {
			return ""
		}
		r, err := filepath.Rel(abs, p)
		if err != nil {
			return ""
		}
		return r
	}
	s.ItemsFromFit = rel(s.Items)
	if s.Joint {
		s.JointFromFit = make([]string, len(s.JointData))
		for k, p := range s.JointData {
			s.JointFromFit[k] = rel(p)
		}
		return
	}
	s.DataFromFit = rel(s.Data)
}

// fileSHA256 is the hex SHA-256 of the file at path, "" for a pipe (it
// cannot be read again) or a file that is not there (responses given
// another way than by a file: nothing to check later).
//
// A folder (a tree of evaluation-tool logs given as --data) is not read
// again: its digest is the SHA-256 of its regular files' paths within it,
// sizes and modification times, so that a file added, removed, cut or
// rewritten shows as a change.
func fileSHA256(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return treeDigest(path)
	}
	in, err := fileio.OpenInput(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer in.Close()
	if !in.Regular {
		return "", nil
	}
	h := sha256.New()
	in.Hash(h)
	if err := in.Drain(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// treeDigest is the digest of the folder dir's listing (see fileSHA256).
func treeDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", filepath.ToSlash(rel), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return "tree:" + hex.EncodeToString(h.Sum(nil)), nil
}

// DataFiles lists the data files of the fit (settings.data, or each of
// settings.joint_data) as recorded.
func (s Settings) DataFiles() []string {
	if s.Joint {
		return s.JointData
	}
	return []string{s.Data}
}

// ErrDataChanged is Resolve's error (wrapped, with the file and both
// hashes) when a data file is where the fit recorded it but its bytes are
// not the ones fitted.
var ErrDataChanged = errors.New("the fit's data file has changed since the fit")

// Resolve returns the settings with each data file and the items file at
// where it is now, for the fit folder dir: the recorded absolute path, or,
// when the file is not there (a project moved or copied with its fit), the
// same path from the fit folder; a data file must have the SHA-256
// recorded. A file in neither place, or with other bytes, is an error
// that says so. Relative paths (older fits) are returned as they are: they
// name a file only with the folder the fit was run from, which such a fit
// does not record, and the caller compares what it reads with the fit.
func (s Settings) Resolve(dir string) (Settings, error) {
	find := func(p, fromFit, sum string) (string, error) {
		if !filepath.IsAbs(p) {
			return p, nil
		}
		places := []string{p}
		if fromFit != "" {
			if q, err := filepath.Abs(filepath.Join(dir, fromFit)); err == nil && q != p {
				places = append(places, q)
			}
		}
		var changed []string
		for _, q := range places {
			if _, err := os.Stat(q); err != nil {
				continue
			}
			if sum == "" {
				return q, nil
			}
			got, err := fileSHA256(q)
			if err != nil {
				return "", err
			}
			if got == sum {
				return q, nil
			}
			changed = append(changed, fmt.Sprintf("%s (SHA-256 %.12s…)", q, got))
		}
		where := strings.Join(places, ", nor at ")
		if len(changed) > 0 {
			return "", fmt.Errorf("%s: %w: %s, the fit read SHA-256 %.12s…: restore it, or refit", dir, ErrDataChanged, strings.Join(changed, " and "), sum)
		}
		return "", fmt.Errorf("%s: the fit's data file is gone: it is not at %s (fit.json's settings): restore it, or refit", dir, where)
	}
	out := s
	var err error
	if s.Joint {
		out.JointData = make([]string, len(s.JointData))
		for k, p := range s.JointData {
			if out.JointData[k], err = find(p, at(s.JointFromFit, k), at(s.JointSHA256, k)); err != nil {
				return s, err
			}
		}
		out.Data = strings.Join(out.JointData, ",")
	} else if out.Data, err = find(s.Data, s.DataFromFit, s.DataSHA256); err != nil {
		return s, err
	}
	if s.Items != "" && filepath.IsAbs(s.Items) && s.ItemsFromFit != "" {
		if _, err := os.Stat(s.Items); err != nil {
			if q := filepath.Join(dir, s.ItemsFromFit); fileExists(q) {
				out.Items = q
			}
		}
	}
	return out, nil
}

func at(v []string, k int) string {
	if k < len(v) {
		return v[k]
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
