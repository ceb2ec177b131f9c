package irt

import "testing"

func TestParseMethod(t *testing.T) {
	for _, m := range Methods {
		got, err := ParseMethod(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "CBMM", "em", "cbmm "} {
		if got, err := ParseMethod(bad); err == nil || got != "" {
			t.Errorf("ParseMethod(%q) = %q, %v; want an error", bad, got, err)
		} else if want := `method "` + bad + `": want cbmm, lbfgs or mml`; err.Error() != want {
			t.Errorf("ParseMethod(%q): error %q, want %q", bad, err, want)
		}
	}
	if got := MethodNames(MethodCBMM, MethodLBFGS); got != "cbmm or lbfgs" {
		t.Errorf("MethodNames(cbmm, lbfgs) = %q", got)
	}
	// lbfgs and mml are not linked here: Joint is false for them.
	if !MethodCBMM.Joint() || MethodLBFGS.Joint() || MethodMML.Joint() {
		t.Errorf("Joint: cbmm %v, lbfgs %v, mml %v; want true, false, false", MethodCBMM.Joint(), MethodLBFGS.Joint(), MethodMML.Joint())
	}
}
