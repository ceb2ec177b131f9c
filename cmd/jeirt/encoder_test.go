package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
)

// writeEncoderRun writes a small by-item training run under root: data/ with
// responses and item texts, cfg/train.yaml (paths relative to cfg/) using
// encoder spec, and returns the config path.
func writeEncoderRun(t *testing.T, root, spec string) string {
	t.Helper()
	os.MkdirAll(filepath.Join(root, "data"), 0o755)
	os.MkdirAll(filepath.Join(root, "cfg"), 0o755)
	topics := []string{"sort the list of numbers in python", "fix the failing unit test in the parser", "prove the triangle inequality for vectors", "compute the integral of the function"}
	var resp, items strings.Builder
	resp.WriteString("model")
	items.WriteString("item_id,text\n")
	for j := 0; j < 24; j++ {
		fmt.Fprintf(&resp, ",q%d", j)
		fmt.Fprintf(&items, "q%d,\"%s, case %d\"\n", j, topics[j%4], j)
	}
	resp.WriteString("\n")
	for m := 0; m < 6; m++ {
		fmt.Fprintf(&resp, "m%d", m)
		for j := 0; j < 24; j++ {
			label := 0
			if (j%4 < 2) == (m%2 == 0) || (m+j)%5 == 0 {
				label = 1
			}
			fmt.Fprintf(&resp, ",%d", label)
		}
		resp.WriteString("\n")
	}
	writeFile(t, filepath.Join(root, "data", "resp.csv"), resp.String())
	writeFile(t, filepath.Join(root, "data", "items.csv"), items.String())
	return writeFile(t, filepath.Join(root, "cfg", "train.yaml"), `data:
  responses: ../data/resp.csv
  items: ../data/items.csv
split: {val: 0.2, test: 0.2, seed: 1, by: item}
encoder: {spec: "`+spec+`"}
model: {dim: 4, hidden: 8, dropout: 0}
train: {epochs: 3, batch_size: 32, lr: 0.01, device: cpu}
output: ../runs/ck
`)
}

// TestTrainEncoderMovedCheckpoint trains with encoder.spec hf:ORG/NAME (a
// fake Hugging Face cache holding tiny-bert), a config-relative model folder
// and tfidf; moves each checkpoint and routes from another working directory.
func TestTrainEncoderMovedCheckpoint(t *testing.T) {
	fixture, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures", "tiny-bert"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fixture, "model.safetensors")); err != nil {
		t.Skipf("tiny-bert fixture not found: %v", err)
	}
	cache := t.TempDir()
	const commit = "0123456789abcdef0123456789abcdef01234567"
	repo := filepath.Join(cache, "models--acme--tiny-bert")
	os.MkdirAll(filepath.Join(repo, "snapshots"), 0o755)
	os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
	if err := os.Symlink(fixture, filepath.Join(repo, "snapshots", commit)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "refs", "main"), commit)
	t.Setenv("HF_HUB_CACHE", cache)

	for _, spec := range []string{"hf:acme/tiny-bert", "../models/bert", "tfidf:3"} {
		t.Run(strings.NewReplacer("/", "_", ":", "_", ".", "").Replace(spec), func(t *testing.T) {
			root := t.TempDir()
			cfg := writeEncoderRun(t, root, spec)
			os.MkdirAll(filepath.Join(root, "models"), 0o755)
			if err := os.Symlink(fixture, filepath.Join(root, "models", "bert")); err != nil {
				t.Fatal(err)
			}
			if _, log, err := runSplit(t, newTrainCmd(), "--config", cfg, "--no-baselines"); err != nil {
				t.Fatalf("train: %v\n%s", err, log)
			}
			ck, err := checkpoint.Load(filepath.Join(root, "runs", "ck"))
			if err != nil {
				t.Fatal(err)
			}
			enc := ck.Manifest.Encoder
			switch spec {
			case "hf:acme/tiny-bert":
				if enc.Spec != spec || enc.Path != filepath.Join(repo, "snapshots", commit) {
					t.Errorf("manifest encoder %+v", enc)
				}
			case "../models/bert":
				if enc.Spec != filepath.Join(root, "models", "bert") || enc.RelPath != "../../models/bert" {
					t.Errorf("manifest encoder %+v: want the folder resolved against the config's", enc)
				}
			default:
				if enc.Spec != spec || len(enc.Files) != 2 || enc.Path != "" {
					t.Errorf("manifest encoder %+v", enc)
				}
			}

			// Move the checkpoint (with the models folder beside it) and route
			// from an unrelated working directory.
			moved := t.TempDir()
			if err := os.Rename(filepath.Join(root, "runs"), filepath.Join(moved, "runs")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(root, "models"), filepath.Join(moved, "models")); err != nil {
				t.Fatal(err)
			}
			elsewhere := t.TempDir()
			t.Chdir(elsewhere)
			queries := writeFile(t, "q.txt", "sort a list of strings in python\nthe integral of a polynomial\n")
			ckDir := filepath.Join(moved, "runs", "ck")
			out, log, err := runSplit(t, newRouteCmd(), queries, "--checkpoint", ckDir, "--print", "csv", "--top", "0")
			if err != nil {
				t.Fatalf("route from another directory: %v\n%s", err, log)
			}
			if n := strings.Count(out, "\n"); n != 3 {
				t.Errorf("route output has %d lines, want 3:\n%s", n, out)
			}
			// Another encoder is refused, naming both fingerprints.
			_, _, err = runSplit(t, newRouteCmd(), queries, "--checkpoint", ckDir, "--encoder", "hash:32")
			if err == nil || !strings.Contains(err.Error(), enc.Fingerprint) || !strings.Contains(err.Error(), "hash/v1/fnv1a64/dim=32") {
				if !strings.HasPrefix(spec, "tfidf") {
					t.Errorf("--encoder hash:32: %v, want a refusal naming both fingerprints", err)
				}
			}
		})
	}
}
