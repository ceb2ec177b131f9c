package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// returnsWithin runs f and fails the test if it has not returned after limit: a
// hang is a failure, not a wait.
func returnsWithin(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("still blocked after %s", limit)
	}
}

func TestInputRefusesFoldersAndDevices(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "is a device, not a file"},
		{"/dev/null", "is a device, not a file"},
		{t.TempDir(), "is a folder, not a file"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		if _, err := ReadInputFile(c.path, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}

// A FIFO nobody writes to blocks only until the run is cancelled; one with
// a writer reads like a file, and a silent writer's pipe gives way to the
// cancellation too.
func TestInputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p")
	mkfifo(t, fifo)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	defer SetInputContext(ctx)()
	returnsWithin(t, 20*time.Second, func() {
		_, err := ReadInputFile(fifo, 0)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "a FIFO with no writer") {
			t.Errorf("no writer: %v", err)
		}
	})

	SetInputContext(context.Background())
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			io.WriteString(w, "a,b\n1,2\n")
			w.Close()
		}
	}()
	returnsWithin(t, 20*time.Second, func() {
		b, err := ReadInputFile(fifo, 0)
		if err != nil || string(b) != "a,b\n1,2\n" {
			t.Errorf("with a writer: %q, %v", b, err)
		}
	})

	ctx2, cancel2 := context.WithCancel(context.Background())
	SetInputContext(ctx2)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.WriteString("some but not all")
	time.AfterFunc(200*time.Millisecond, cancel2)
	returnsWithin(t, 20*time.Second, func() {
		_, err := ReadInputFile("/dev/fd/"+strconv.Itoa(int(r.Fd())), 0)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a silent writer: %v", err)
		}
	})
}

// A file that grows while it is read is refused rather than read in part,
// and a pipe is read only up to its limit.
func TestInputGrowthAndLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grows.csv")
	mustWrite(t, path, "a,b\n")
	in, err := OpenInput(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(strings.Repeat("1,0\n", 1000))
	f.Close()
	if _, err := io.ReadAll(in); err == nil || !strings.Contains(err.Error(), "grew while it was read (it had 4 bytes when opened)") {
		t.Errorf("growing file: %v", err)
	}

	r, w, _ := os.Pipe()
	defer r.Close()
	go func() {
		w.WriteString(strings.Repeat("x", 5000))
		w.Close()
	}()
	_, err = ReadInputFile("/dev/fd/"+strconv.Itoa(int(r.Fd())), 1000, "a config")
	if err == nil || !strings.Contains(err.Error(), "is larger than 1000 B, the most jeirt reads of a config") {
		t.Errorf("pipe past its limit: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	mustWrite(t, big, strings.Repeat("#", 2000))
	if _, err := ReadInputFile(big, 1000, "a config"); err == nil || !strings.Contains(err.Error(), "is 2.0 KiB, larger than 1000 B") {
		t.Errorf("file past its limit: %v", err)
	}
}

// A regular file cut short or rewritten while it is read is refused when
// its end is reached: cut at a line boundary, every record read looked
// whole (data inspect reported 5,172,414 of 8,000,000 cells, no warning).
func TestInputShrinkAndChange(t *testing.T) {
	const size = 3 << 20 // three times the read buffer
	body := "a,b\n" + strings.Repeat("1,0\n", (size-4)/4)
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, path string, opened time.Time)
		want   string
	}{
		{"untouched", func(*testing.T, string, time.Time) {}, ""},
		{"cut at a line boundary", func(t *testing.T, path string, _ time.Time) {
			if err := os.Truncate(path, 2<<20); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("shrank while it was read (it had %d bytes when opened, %d when its end was reached)", size, 2<<20)},
		{"emptied", func(t *testing.T, path string, _ time.Time) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("shrank while it was read (it had %d bytes when opened, %d when its end was reached)", size, 1<<20)},
		{"same size, other bytes", func(t *testing.T, path string, opened time.Time) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte("0,1\n"), size-4)
			f.Close()
			os.Chtimes(path, opened.Add(time.Second), opened.Add(time.Second))
		}, "changed while it was read (modified at "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cells.csv")
			mustWrite(t, path, body)
			in, err := OpenInput(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			head := make([]byte, 4)
			if _, err := io.ReadFull(in, head); err != nil || string(head) != "a,b\n" {
				t.Fatalf("first bytes %q, %v", head, err)
			}
			tc.mutate(t, path, in.ModTime)
			rest, err := io.ReadAll(in)
			switch {
			case tc.want == "" && (err != nil || len(rest) != size-4):
				t.Errorf("read %d of %d bytes: %v", len(rest), size-4, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), path+" "+tc.want)):
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}
