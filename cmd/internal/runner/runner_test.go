package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRunner writes a shell script standing in for jeirt-cuda and points
// JEIRT_CUDA_RUNNER at it.
func fakeRunner(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), Name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvRunner, p)
	t.Setenv(EnvChild, "")
	return p
}

// noLibcuda is what the dynamic loader prints for a jeirt-cuda on a machine
// without the NVIDIA driver.
const noLibcuda = `if [ "$1 $2" = "device probe" ]; then
	echo "jeirt-cuda: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory" >&2
	exit 127
fi
echo "ran on the GPU"
exit 0
`

func TestDelegateProbeFails(t *testing.T) {
	p := fakeRunner(t, noLibcuda)
	var out, errb bytes.Buffer
	handled, code, err := delegate(context.Background(), "auto", []string{"irt", "fit"}, nil, &out, &errb)
	if handled || code != 0 || err != nil {
		t.Fatalf("auto: handled %v, code %d, err %v; want the CPU", handled, code, err)
	}
	want := "jeirt: device auto: running on the CPU: " + p + ": jeirt-cuda: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory\n"
	if errb.String() != want || out.Len() != 0 {
		t.Fatalf("auto wrote %q to stderr and %q to stdout, want %q", errb.String(), out.String(), want)
	}
	errb.Reset()
	handled, _, err = delegate(context.Background(), "cuda", []string{"irt", "fit"}, nil, &out, &errb)
	if handled || !errors.Is(err, ErrNoRunner) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "libcuda.so.1: cannot open shared object file") {
		t.Fatalf("cuda: handled %v, err %v; want a one-line error naming libcuda.so.1", handled, err)
	}
	if errb.Len() != 0 || out.Len() != 0 {
		t.Fatalf("cuda wrote %q %q", out.String(), errb.String())
	}
	t.Logf("--device cuda: %v", err)
	// The CPU never asks for a runner.
	if handled, _, err := delegate(context.Background(), "cpu", nil, nil, &out, &errb); handled || err != nil || errb.Len() != 0 {
		t.Fatalf("cpu: handled %v, err %v", handled, err)
	}
}

func TestDelegateMissingRunner(t *testing.T) {
	t.Setenv(EnvRunner, filepath.Join(t.TempDir(), "nowhere", Name))
	t.Setenv(EnvChild, "")
	var out, errb bytes.Buffer
	if handled, _, err := delegate(context.Background(), "auto", nil, nil, &out, &errb); handled || err != nil || errb.Len() != 0 {
		t.Fatalf("auto: handled %v, err %v, stderr %q: want a silent CPU run", handled, err, errb.String())
	}
	_, _, err := delegate(context.Background(), "cuda", nil, nil, &out, &errb)
	if !errors.Is(err, ErrNoRunner) || !strings.Contains(err.Error(), "no such file or directory") {
		t.Fatalf("cuda: %v", err)
	}
	// Without the variable: beside the executable (the test binary has no
	// jeirt-cuda beside it), then PATH.
	t.Setenv(EnvRunner, "")
	t.Setenv("PATH", t.TempDir())
	_, _, err = delegate(context.Background(), "cuda", nil, nil, &out, &errb)
	if !errors.Is(err, ErrNoRunner) || !strings.Contains(err.Error(), "jeirt-cuda was not found beside ") || !strings.Contains(err.Error(), " or on PATH") {
		t.Fatalf("cuda: %v", err)
	}
}

func TestDelegateRuns(t *testing.T) {
	fakeRunner(t, `if [ "$1 $2" = "device probe" ]; then echo "NVIDIA H200 (fake), 141 GB"; exit 0; fi
[ -n "$JEIRT_RUNNER_CHILD" ] || exit 99
echo "args: $*"
read line
echo "stdin: $line"
echo "to stderr" >&2
exit 7
`)
	var out, errb bytes.Buffer
	handled, code, err := delegate(context.Background(), "auto", []string{"irt", "fit", "--data", "a b.csv"}, strings.NewReader("hello\n"), &out, &errb)
	if !handled || code != 7 || err != nil {
		t.Fatalf("handled %v, code %d, err %v; want the runner's exit code 7", handled, code, err)
	}
	if want := "args: irt fit --data a b.csv\nstdin: hello\n"; out.String() != want || errb.String() != "to stderr\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
	// Inside a runner nothing delegates again.
	t.Setenv(EnvChild, "1")
	if handled, _, err := delegate(context.Background(), "cuda", nil, nil, &out, &errb); handled || err != nil {
		t.Fatalf("in a runner: handled %v, err %v", handled, err)
	}
}

func TestProbeTimeout(t *testing.T) {
	fakeRunner(t, "exec sleep 30\n")
	old := ProbeTimeout
	ProbeTimeout = 200 * time.Millisecond
	defer func() { ProbeTimeout = old }()
	r, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "device probe: no answer within 200ms") {
		t.Fatalf("err = %v", err)
	}
}

// TestRealRunnerFailsCleanly: a jeirt-cuda built by scripts/build-cuda.sh
// (bin/jeirt-cuda), where there is one, fails its probe with one line on a
// machine without a usable GPU (and names the device where there is one).
func TestRealRunnerFailsCleanly(t *testing.T) {
	p, err := filepath.Abs(filepath.Join("..", "bin", Name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s: build it with scripts/build-cuda.sh", p)
	}
	t.Setenv(EnvChild, "")
	dev, err := Runner{p}.Probe(context.Background())
	if err == nil {
		t.Logf("%s probes a GPU: %s", p, dev)
		return
	}
	if strings.Contains(err.Error(), "\n") || !(strings.Contains(err.Error(), "libcuda.so.1") || strings.Contains(err.Error(), "CUDA driver did not initialise")) {
		t.Fatalf("probe error %q: want one line about the driver", err)
	}
	t.Logf("%s: %v", p, err)
}
