package irtrun

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/train/irt/irttest"
)

func TestCheckSettingsRefusesNaN(t *testing.T) {
	base := irtfit.Settings{Rank: 1, Sigma: 1, Method: "cbmm", MaxIter: 10, Level: 0.95, MinA: 0.1}
	if err := CheckSettings(base); err != nil {
		t.Fatal(err)
	}
	for _, s := range []func(*irtfit.Settings){
		func(s *irtfit.Settings) { s.MinA = math.NaN() },
		func(s *irtfit.Settings) { s.MinA = math.Inf(1) },
		func(s *irtfit.Settings) { s.Tol = math.NaN() },
		func(s *irtfit.Settings) { s.Level = math.NaN() },
		func(s *irtfit.Settings) { s.Sigma = math.NaN() },
	} {
		c := base
		s(&c)
		if err := CheckSettings(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// --rank 5 on 2 x 2 data is refused before fitting.
func TestFitJobRankAboveData(t *testing.T) {
	r := irttest.Guttman(2, 2)
	job := FitJob{Settings: irtfit.Settings{Rank: 5, Sigma: 1, Method: "cbmm", MaxIter: 10, Level: 0.95}, Data: []string{"r.csv"}}
	var fe *model.FieldError
	if _, _, err := job.Run(context.Background(), []*model.Responses{r}); err == nil || !strings.Contains(err.Error(), "r.csv: rank 5 needs") || !errors.As(err, &fe) || fe.Field != "Rank" {
		t.Errorf("got %v", err)
	}
}
