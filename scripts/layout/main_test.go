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
		{"encoder/transformer", []string{"model/simd", "train/backend"}, []string{"encoder/transformer imports train/backend"}},
		{"train/irt", []string{"model", "train/backend", "encoder"}, nil},
		{"train/route", []string{"cmd/internal/serve"}, []string{"train/route imports cmd/internal/serve"}},
		{"cuda/internal/cbmm", []string{"cuda/internal/gpu", "train/backend"}, nil},
		{"cuda", []string{"train/irt"}, []string{"cuda imports train/irt"}},
		{"cmd/internal/routerun", []string{"cmd/internal/cli", "cmd/internal/runner", "cmd/internal/clidoc", "train/pipeline"}, nil},
		{"cmd/internal/serve/x", []string{"cmd/internal/serve", "cmd/internal/serve/y"}, nil},
		{"cmd/internal/sweeprun", []string{"cmd/internal/trainrun", "cmd/internal/trainrun/z", "model"},
			[]string{"cmd/internal/sweeprun imports cmd/internal/trainrun (an application imports no other application)",
				"cmd/internal/sweeprun imports cmd/internal/trainrun/z (an application imports no other application)"}},
		{"cmd/internal/cli", []string{"cmd/internal/runner"}, nil},
		{"cmd/internal/cli", []string{"cmd/internal/runner", "cmd/internal/irtrun", "cmd/internal/irtrun/x", "model"},
			[]string{"cmd/internal/cli imports cmd/internal/irtrun (a package every application shares imports no application)",
				"cmd/internal/cli imports cmd/internal/irtrun/x (a package every application shares imports no application)"}},
		{"cmd/internal/slurm/x", []string{"cmd/internal/sweeprun", "cmd/internal/clidoc"},
			[]string{"cmd/internal/slurm/x imports cmd/internal/sweeprun (a package every application shares imports no application)"}},
		{"cmd/internal/analyzerun", []string{"cmd/internal/irtrun", "cmd/internal/sweeprun"},
			[]string{"cmd/internal/analyzerun imports cmd/internal/irtrun (an application imports no other application)",
				"cmd/internal/analyzerun imports cmd/internal/sweeprun (an application imports no other application)"}},
		{"cmd/jeirt", []string{"cmd/internal/serve", "cmd/internal/routerun"}, nil},
		{"scripts/layout", []string{"cmd/internal/cli"}, []string{"scripts/layout imports cmd/internal/cli"}},
		{"modelx", []string{"train"}, nil}, // not under model/
	} {
		if got := upward(c.from, c.imports); !slices.Equal(got, c.want) {
			t.Errorf("upward(%s, %v) = %q, want %q", c.from, c.imports, got, c.want)
		}
	}
}
