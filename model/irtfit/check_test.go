package irtfit

import (
	"errors"
	"math"
	"testing"

	"github.com/jeirt/jeirt/model"
)

// TestSettingsCheck: each fault of the settings alone is one
// model.FieldError on its field, with its exact message.
func TestSettingsCheck(t *testing.T) {
	ok := Settings{Level: 0.95}
	if err := ok.Check(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	for _, tc := range []struct {
		edit  func(*Settings)
		field string
		msg   string
	}{
		{func(s *Settings) { s.Prior = "bogus" }, "Prior", ""},
		{func(s *Settings) { s.MinA = math.Inf(1) }, "MinA", "min-a +Inf: must be finite and not negative"},
		{func(s *Settings) { s.Model = "4pl" }, "Model", `model "4pl": want 1pl, 2pl or 3pl`},
		{func(s *Settings) { s.Model, s.Guess = string(model.OnePL), "options" }, "Guess", "guess options: lower asymptotes need model 3pl"},
		{func(s *Settings) { s.Model, s.GuessPrior = string(model.ThreePL), []float64{2} }, "GuessPrior", "guess-prior [2]: want two numbers α,β of at least 1 (1,1: no prior)"},
		{func(s *Settings) { s.MinAnswers = -1 }, "MinAnswers", "min-answers -1: must not be negative (0: no threshold)"},
		{func(s *Settings) { s.Bootstrap = 1 }, "Bootstrap", "bootstrap 1: must be 0 (none) or at least 2"},
		{func(s *Settings) { s.Level = 0 }, "Level", "level 0: must be in (0, 1)"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Check()
		var fe *model.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || (tc.msg != "" && err.Error() != tc.msg) {
			t.Errorf("%+v: got %v, want %s: %q", s, err, tc.field, tc.msg)
		}
	}
}
