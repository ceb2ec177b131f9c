package encoder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// fakeHFCache makes a hub cache holding ORG/NAME = tiny-bert (a symlinked
// snapshot) with refs/main naming it, and returns the cache folder and the
// snapshot folder.
func fakeHFCache(t *testing.T, name string) (cache, snapshot string) {
	src, err := filepath.Abs(tinyBERT(t))
	if err != nil {
		t.Fatal(err)
	}
	cache = t.TempDir()
	repo := filepath.Join(cache, "models--"+strings.ReplaceAll(name, "/", "--"))
	const commit = "0123456789abcdef0123456789abcdef01234567"
	snapshot = filepath.Join(repo, "snapshots", commit)
	if err := os.MkdirAll(filepath.Dir(snapshot), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, snapshot); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
	if err := os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	return cache, snapshot
}

func TestResolveHF(t *testing.T) {
	cache, snapshot := fakeHFCache(t, "acme/tiny-bert")
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HOME", "/nonexistent")
	commit := filepath.Base(snapshot)
	for _, ref := range []string{"acme/tiny-bert", "acme/tiny-bert@main", "acme/tiny-bert@" + commit} {
		dir, err := ResolveHF(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if dir != snapshot {
			t.Errorf("%s: %s, want %s", ref, dir, snapshot)
		}
	}
	enc, err := Open("hf:acme/tiny-bert")
	if err != nil {
		t.Fatal(err)
	}
	direct, err := Open(tinyBERT(t))
	if err != nil {
		t.Fatal(err)
	}
	if enc.Fingerprint() != direct.Fingerprint() {
		t.Errorf("hf: fingerprint %s, folder %s", enc.Fingerprint(), direct.Fingerprint())
	}

	// HF_HOME/hub when HF_HUB_CACHE is unset.
	home := t.TempDir()
	if err := os.Symlink(cache, filepath.Join(home, "hub")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", home)
	if dir, err := ResolveHF("acme/tiny-bert"); err != nil || dir != filepath.Join(home, "hub", "models--acme--tiny-bert", "snapshots", commit) {
		t.Errorf("via HF_HOME: %q, %v", dir, err)
	}

	// Missing: the error lists every place looked at.
	_, err = ResolveHF("acme/other@v2")
	if err == nil {
		t.Fatal("missing model: no error")
	}
	for _, want := range []string{filepath.Join(home, "hub", "models--acme--other", "refs", "v2"), filepath.Join(home, "hub", "models--acme--other", "snapshots", "v2"), "never downloads"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	for _, bad := range []string{"", "noorg", "a/b/c", "a/b@x/y", "../x"} {
		if _, err := ResolveHF(bad); err == nil {
			t.Errorf("ResolveHF(%q): no error", bad)
		}
	}
}

func TestResolveSpec(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"hash", "hash"}, {"hash:64", "hash:64"}, {"tfidf", "tfidf"}, {"tfidf:128", "tfidf:128"},
		{"hf:a/b", "hf:a/b"}, {"models/bert", "/cfg/models/bert"}, {"/abs/bert", "/abs/bert"},
		{"precomputed:v.npy", "precomputed:/cfg/v.npy"}, {"precomputed:/x/v.npy", "precomputed:/x/v.npy"},
	} {
		if got := ResolveSpec(c.spec, "/cfg"); got != c.want {
			t.Errorf("ResolveSpec(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}

// TestOpenRecorded moves a model folder after recording it: the relative
// location still finds it; an override with other weights is refused with
// both fingerprints.
func TestOpenRecorded(t *testing.T) {
	root := t.TempDir()
	folder := filepath.Join(root, "models", "bert")
	os.MkdirAll(filepath.Dir(folder), 0o755)
	if err := os.Rename(copyFixture(t), folder); err != nil {
		t.Fatal(err)
	}
	enc, err := Open(folder)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Record(folder, enc)
	if err != nil {
		t.Fatal(err)
	}
	info.RelPath = "../models/bert" // as Checkpoint.Write sets it for root/ck
	moved := t.TempDir()
	os.MkdirAll(filepath.Join(moved, "ck"), 0o755)
	if err := os.Rename(filepath.Join(root, "models"), filepath.Join(moved, "models")); err != nil {
		t.Fatal(err)
	}
	got, err := OpenRecorded(info, filepath.Join(moved, "ck"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprint() != info.Fingerprint {
		t.Errorf("fingerprint %s, want %s", got.Fingerprint(), info.Fingerprint)
	}
	var setting *model.FieldError
	if _, err := OpenRecorded(info, filepath.Join(root, "ck"), ""); err == nil || !strings.Contains(err.Error(), "give its location with encoder SPEC") || !errors.As(err, &setting) || setting.Field != "Encoder" {
		t.Errorf("encoder gone: error %v, want one suggesting the encoder setting (--encoder)", err)
	}
	_, err = OpenRecorded(info, "", "hash:32")
	var fe *FingerprintError
	if !errors.As(err, &fe) || fe.Want != info.Fingerprint || !strings.Contains(err.Error(), info.Fingerprint) || !strings.Contains(err.Error(), "hash/v1/fnv1a64/dim=32") {
		t.Errorf("override with another encoder: %v", err)
	}
	if _, err := OpenRecorded(info, "", filepath.Join(moved, "models", "bert")); err != nil {
		t.Errorf("override with the moved folder: %v", err)
	}
}

// TestOpenRecordedTFIDF: a fitted tfidf encoder comes back from the files
// recorded with it.
func TestOpenRecordedTFIDF(t *testing.T) {
	ctx := context.Background()
	enc, _ := Open("tfidf:3")
	if err := enc.(Fitter).Fit(ctx, tfidfCorpus()); err != nil {
		t.Fatal(err)
	}
	info, err := Record("tfidf:3", enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Files) != 2 || info.Path != "" {
		t.Fatalf("recorded %+v", info)
	}
	dir := t.TempDir()
	ck := &checkpoint.Checkpoint{Model: &model.JEIRT{InputDim: 3, Hidden: 1, Dim: 1, W1: make([]float32, 3), C1: make([]float32, 1),
		W2: make([]float32, 1), C2: make([]float32, 1), Models: []string{"m"}, Items: []string{"i"}, M: []float32{0}, Q: []float32{0}},
		Manifest: checkpoint.Manifest{Encoder: info}}
	if err := ck.Write(filepath.Join(dir, "ck"), false); err != nil {
		t.Fatal(err)
	}
	back, err := checkpoint.Load(filepath.Join(dir, "ck"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenRecorded(back.Manifest.Encoder, back.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var fe *FingerprintError
	if _, err := OpenRecorded(back.Manifest.Encoder, back.Dir, "hash"); !errors.As(err, &fe) {
		t.Errorf("--encoder hash on a tfidf checkpoint: %v, want a FingerprintError", err)
	}
	if _, err := OpenRecorded(back.Manifest.Encoder, "", back.Dir); err != nil {
		t.Errorf("--encoder naming the checkpoint folder: %v", err)
	}
	a, _ := enc.Encode(ctx, []string{"the judge read the contract"})
	b, _ := got.Encode(ctx, []string{"the judge read the contract"})
	if got.Fingerprint() != enc.Fingerprint() || a[0][0] != b[0][0] || a[0][2] != b[0][2] {
		t.Errorf("reloaded tfidf differs: %s %v, want %s %v", got.Fingerprint(), b, enc.Fingerprint(), a)
	}
}
