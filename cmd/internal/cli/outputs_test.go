package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// showFlags renders every field error of an error's tree with the command's
// flags (o.Flags first, else "--" + the field's name), wrapped or joined,
// and keeps the error chain.
func TestShowFlags(t *testing.T) {
	exists := errors.New("exists")
	o := Outputs{Flags: map[string]string{"Train": "--data"}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{model.FieldErrorf("MinItems", "{MinItems} %d: must be at least 1", 0), "--min-items 0: must be at least 1"},
		{fmt.Errorf("r.csv: %w", model.FieldErrorf("Train", "{Train} ranks the models for {Margin}")), "r.csv: --data ranks the models for --margin"},
		{fmt.Errorf("output: %w %w", fmt.Errorf("x %w", model.FieldErrorf("Force", "pass {Force}")), model.FieldErrorf("Set", "({Set} output=DIR)")),
			"output: x pass --force (--set output=DIR)"},
		{errors.Join(model.FieldErrorf("Keep", "{Keep}"), exists), "--keep\nexists"},
		{exists, "exists"},
	} {
		got := showFlags(c.err, o)
		if got.Error() != c.want {
			t.Errorf("%q shown as %q, want %q", c.err, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%q: the chain is lost", c.err)
		}
	}
	if showFlags(nil, o) != nil {
		t.Error("nil shown as an error")
	}
}
