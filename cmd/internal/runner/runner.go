// Package runner runs a command on the GPU through jeirt's CUDA runner, so
// that the jeirt binary itself never links the CUDA driver and starts on any
// machine.
//
// The default jeirt build is pure Go with cgo only for the standard library.
// The CUDA backend is a second binary, jeirt-cuda (the same commands built
// with -tags jeirtcuda, linked against libcuda.so.1), installed next to
// jeirt. When a command is asked for --device cuda or auto, Delegate looks
// for the runner, asks it whether a GPU is usable (`jeirt-cuda device probe`,
// with a short timeout: on a machine without the NVIDIA driver the dynamic
// loader's error about libcuda.so.1 is the reason), and if so runs the same
// command line in it, passing standard input and output through, forwarding
// signals and returning its exit code. This is how ollama runs its GPU
// backends: as runner processes of one front-end binary.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Name is the runner's file name.
const Name = "jeirt-cuda"

// Env names. EnvRunner points at the runner binary; EnvChild is set in the
// runner's environment, so that it never delegates again.
const (
	EnvRunner = "JEIRT_CUDA_RUNNER"
	EnvChild  = "JEIRT_RUNNER_CHILD"
)

// ProbeTimeout bounds `jeirt-cuda device probe`. The first open of a GPU
// may JIT-compile the kernels' PTX for it (6-12 s a module for sm_90), unless
// the driver's cache (CUDA_CACHE_PATH) already holds them or cubins were
// assembled ahead of time (JEIRT_CUDA_CUBINS).
var ProbeTimeout = 90 * time.Second

// ErrNoRunner is wrapped by the errors of --device cuda when no runner is
// found or it reports no usable GPU.
var ErrNoRunner = errors.New("no usable CUDA runner")

// Runner is a found CUDA runner binary.
type Runner struct {
	Path string
}

// Find returns the runner: $JEIRT_CUDA_RUNNER when set, else jeirt-cuda in
// the directory of the running executable, else jeirt-cuda on PATH.
func Find() (Runner, error) {
	if p := os.Getenv(EnvRunner); p != "" {
		if _, err := os.Stat(p); err != nil {
			return Runner{}, fmt.Errorf("%s=%s: %w", EnvRunner, p, err)
		}
		return Runner{p}, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), Name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return Runner{p}, nil
		}
		looked = append(looked, "beside "+exe)
	}
	if p, err := exec.LookPath(Name); err == nil {
		return Runner{p}, nil
	}
	looked = append(looked, "on PATH")
	return Runner{}, fmt.Errorf("%s was not found %s (install it next to jeirt with scripts/build-cuda.sh, or set %s)", Name, strings.Join(looked, " or "), EnvRunner)
}

// Probe runs `runner device probe` and returns the device it names, or why
// the runner cannot use a GPU (the first line it printed to standard error,
// or how it failed).
func (r Runner) Probe(parent context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(parent, ProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Path, "device", "probe")
	cmd.Env = append(os.Environ(), EnvChild+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err := parent.Err(); err != nil { // the command was stopped, not the probe
		return "", fmt.Errorf("%s device probe: %w", r.Path, err)
	}
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%s device probe: no answer within %s (the first open of a GPU compiles the kernels for it: point CUDA_CACHE_PATH at a writable folder so that this happens once, or set JEIRT_CUDA_CUBINS to kernels assembled by ptxas; see docs/gpu.md)", r.Path, ProbeTimeout)
	}
	if err != nil {
		if line := firstLine(errb.String()); line != "" {
			return "", fmt.Errorf("%s: %s", r.Path, line)
		}
		if line := firstLine(out.String()); line != "" {
			return "", fmt.Errorf("%s: %s", r.Path, line)
		}
		return "", fmt.Errorf("%s device probe: %v", r.Path, err)
	}
	dev := firstLine(out.String())
	if dev == "" {
		return "", fmt.Errorf("%s device probe printed no device", r.Path)
	}
	return dev, nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Run runs the runner with args, with this process's standard input, output
// and error, forwarding SIGINT, SIGTERM and SIGHUP to it, and returns its exit
// code (128 + the signal's number when a signal ended it).
func (r Runner) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(r.Path, args...)
	cmd.Env = append(os.Environ(), EnvChild+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("starting %s: %w", r.Path, err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-ctx.Done():
				cmd.Process.Signal(syscall.SIGTERM)
				<-done
				return
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}

// Delegate runs a command that was asked for device on the CUDA runner when
// it should: device "cuda" or "auto", outside a runner, with a runner found
// whose probe names a GPU. Then it returns handled and the runner's exit
// code; the caller exits with it. Otherwise the command runs in this process
// on the CPU: for "cuda" Delegate returns an error wrapping ErrNoRunner that
// says in one line why no GPU is usable; for "auto" it writes the reason to
// stderr when a runner was found but cannot use a GPU (a missing runner is a
// CPU-only install, and is silent) and returns nil.
func Delegate(ctx context.Context, device string, args []string) (handled bool, exitCode int, err error) {
	return delegate(ctx, device, args, os.Stdin, os.Stdout, os.Stderr)
}

func delegate(ctx context.Context, device string, args []string, stdin io.Reader, stdout, stderr io.Writer) (bool, int, error) {
	if (device != "cuda" && device != "auto") || os.Getenv(EnvChild) != "" {
		return false, 0, nil
	}
	r, err := Find()
	if err != nil {
		if device == "cuda" {
			return false, 0, fmt.Errorf("%w: %v", ErrNoRunner, err)
		}
		return false, 0, nil
	}
	if _, err := r.Probe(ctx); err != nil {
		if device == "cuda" {
			return false, 0, fmt.Errorf("%w: %v", ErrNoRunner, err)
		}
		fmt.Fprintf(stderr, "jeirt: device auto: running on the CPU: %v\n", err)
		return false, 0, nil
	}
	code, err := r.Run(ctx, args, stdin, stdout, stderr)
	return true, code, err
}
