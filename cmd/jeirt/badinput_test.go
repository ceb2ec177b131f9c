package main

import (
	"strings"
	"testing"
)

// add-model --fraction 0 was treated as 1 (the library's zero value).
func TestAddModelFractionZeroRefused(t *testing.T) {
	for _, f := range []string{"0", "-0.5", "1.5", "NaN"} {
		_, err := runCmd(t, newAddModelCmd(), "--checkpoint", t.TempDir(), "--data", "r.csv", "--fraction", f)
		if err == nil || !strings.Contains(err.Error(), "--fraction") {
			t.Errorf("--fraction %s: %v", f, err)
		}
	}
}
