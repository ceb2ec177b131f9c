package onboardrun

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/train/onboard"
)

// add-model's numeric flags are refused where no fit can use them, naming
// the flag, before the checkpoint is opened (the one given here does not
// exist: an error about it would mean the numbers were not checked first).
func TestSafetyAddModelNumbers(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-checkpoint")
	for _, tc := range []struct {
		name, field, want string
		o                 onboard.Onboard
		fraction          float64
		suggest           bool
	}{
		{"--shrink NaN", "Shrink", "shrink NaN: must be finite and positive (the ridge added to the population covariance, relative to its mean variance)", onboard.Onboard{Shrink: math.NaN()}, 1, false},
		{"--shrink +Inf", "Shrink", "shrink +Inf: must be finite and positive (the ridge added to the population covariance, relative to its mean variance)", onboard.Onboard{Shrink: math.Inf(1)}, 1, false},
		{"--l2 Inf", "L2", "l2 +Inf: must be finite and positive (the l2 prior's precision)", onboard.Onboard{L2: math.Inf(1)}, 1, false},
		{"--l2 -1 (suggest)", "L2", "l2 -1: must be finite and positive (the l2 prior's precision)", onboard.Onboard{L2: -1}, 0, true},
		{"--fraction NaN", "Fraction", "fraction NaN: must be in (0, 1]", onboard.Onboard{}, math.NaN(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.suggest {
				err = SuggestRun{Round: onboard.Round{Onboard: tc.o, K: 3}, Checkpoint: missing}.Run(context.Background(), &strings.Builder{})
			} else {
				_, _, err = AddRun{Checkpoint: missing, Data: "r.csv", Options: onboard.AddModelsOptions{Onboard: tc.o, Fraction: tc.fraction}}.Run(context.Background())
			}
			var fe *model.FieldError
			if err == nil || err.Error() != tc.want || !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
