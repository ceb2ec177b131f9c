package main

import (
	"os"
	"strings"
	"testing"
)

// The help texts say what the commands do, in docs/irt.md's notation: one
// response function with the intercept d and the difficulty b = −d/a; irt
// fits more than the 2PL; encode lists tfidf; irt cv explains its columns;
// docs/serve.md says /metrics needs the token.
func TestHelpTexts(t *testing.T) {
	defer rootCmd.SetArgs(nil)
	defer rootCmd.SetOut(nil)
	defer rootCmd.SetErr(nil)
	help := func(args ...string) string {
		out, err := runCmd(t, rootCmd, append(args, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	irtDoc, err := os.ReadFile("../../docs/irt.md")
	if err != nil {
		t.Fatal(err)
	}
	const response = "sigmoid((θ_i·a_j + d_j)/σ)"
	irt := help("irt")
	if !strings.Contains(irt, response) || !strings.Contains(string(irtDoc), response) || !strings.Contains(irt, "b = −d/a") || strings.Contains(irt, "b_j") {
		t.Errorf("irt --help and docs/irt.md do not share the notation %s:\n%s", response, irt)
	}
	if top := help(); !strings.Contains(top, "irt         Fit IRT (1PL, 2PL, 3PL, multidimensional, graded) by cBMM") {
		t.Errorf("jeirt --help:\n%s", top)
	}
	if enc := help("encode"); !strings.Contains(enc, "\n  tfidf, tfidf:DIM[:MIN_DF]\n") || !strings.Contains(enc, "tfidf, tfidf:DIM[:MIN_DF], a model folder") {
		t.Errorf("encode --help does not list tfidf:\n%s", enc)
	}
	cv := help("irt", "cv")
	for _, col := range []string{"log_loss", "accuracy", "auc", "brier", "ece", "spearman", "kendall"} {
		if !strings.Contains(cv, "\n  "+col+" ") {
			t.Errorf("irt cv --help does not explain %s:\n%s", col, cv)
		}
	}
	serveDoc, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(serveDoc), "| `GET /metrics` | Prometheus metrics (needs the token) |") || !strings.Contains(string(serveDoc), "`GET /metrics` needs the token") {
		t.Error("docs/serve.md does not say /metrics needs the token")
	}
}
