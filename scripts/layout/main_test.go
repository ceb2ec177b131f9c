package main

import (
	"slices"
	"testing"
)

func TestUpward(t *testing.T) {
	for _, c := range []struct {
		from    string
		imports []string
		want    []string
	}{
		{"model/read", []string{"model", "model/fileio"}, nil},
		{"model/read", []string{"train/eval", "encoder", "cmd/internal/cli"}, []string{"model/read imports train/eval", "model/read imports encoder", "model/read imports cmd/internal/cli"}},
		{"model", []string{"cuda"}, []string{"model imports cuda"}},
		{"encoder/transformer", []string{"model/kernel", "train/backend"}, []string{"encoder/transformer imports train/backend"}},
		{"train/irt", []string{"model", "train/backend", "encoder"}, nil},
		{"train/route", []string{"cmd/internal/serve"}, []string{"train/route imports cmd/internal/serve"}},
		{"cuda/internal/cbmm", []string{"cuda/internal/gpu", "train/backend"}, nil},
		{"cuda", []string{"train/irt"}, []string{"cuda imports train/irt"}},
		{"cmd/internal/trainrun", []string{"cmd/internal/cli", "train/jeirt"}, nil},
		{"scripts/layout", []string{"cmd/internal/cli"}, []string{"scripts/layout imports cmd/internal/cli"}},
		{"modelx", []string{"train"}, nil}, // not under model/
	} {
		if got := upward(c.from, c.imports); !slices.Equal(got, c.want) {
			t.Errorf("upward(%s, %v) = %q, want %q", c.from, c.imports, got, c.want)
		}
	}
}
