package model

import (
	"errors"
	"fmt"
	"testing"
)

func TestFieldError(t *testing.T) {
	for field, want := range map[string]string{"Rule": "rule", "MinItems": "min-items", "TargetSE": "target-se", "MaxIter": "max-iter", "KLWidth": "kl-width"} {
		if got := FieldName(field); got != want {
			t.Errorf("FieldName(%s) = %s, want %s", field, got, want)
		}
	}
	err := fmt.Errorf("fit.json: %w", FieldErrorf("Estimator", "cat: {Estimator} %s is rank 1 only; use map with {Rule} %q", "eap", "fisher"))
	if err.Error() != `fit.json: cat: estimator eap is rank 1 only; use map with rule "fisher"` {
		t.Errorf("library form: %s", err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Estimator" {
		t.Fatalf("errors.As: %v", fe)
	}
	if got := fe.Render(func(f string) string { return "--" + FieldName(f) }); got != `cat: --estimator eap is rank 1 only; use map with --rule "fisher"` {
		t.Errorf("flag form: %s", got)
	}
}
