// Package stress is the one switch of the long tests: the shipped corpora
// fitted on many splits, every encoder fixture sentence and the OS-thread
// schedule on the CUDA harness, the statistical checks that need size. The
// default go test ./... runs a smaller set so that it takes minutes;
// JEIRT_STRESS=full, which CI's .ci/run sets, runs them all.
package stress

import (
	"os"
	"testing"
)

// Env is the variable that switches the long tests on (Value).
const (
	Env   = "JEIRT_STRESS"
	Value = "full"
)

// Full reports whether the long tests run: JEIRT_STRESS=full.
func Full() bool { return os.Getenv(Env) == Value }

// Long skips t unless JEIRT_STRESS=full, saying how to run it and what the
// default set checks in its place (why).
func Long(t testing.TB, why string) {
	t.Helper()
	if !Full() {
		t.Skipf("long test: runs with %s=%s (CI sets it); by default %s", Env, Value, why)
	}
}
