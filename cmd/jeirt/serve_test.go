package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("JEIRT_TEST_TOKEN", "tok")
	cmd := newServeCmd()
	var log syncBuffer
	cmd.SetOut(io.Discard)
	cmd.SetErr(&log)
	cmd.SetArgs([]string{"--checkpoint", ck, "--addr", addr, "--token-env", "JEIRT_TEST_TOKEN", "--drain", "2s"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	base := "http://" + addr
	for k := 0; ; k++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if k == 200 {
			t.Fatalf("serve did not start: %v\n%s", err, log.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
	req, _ := http.NewRequest("POST", base+"/v1/route", strings.NewReader(`{"text":"what is 2+2?"}`))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"model":"big"`) {
		t.Errorf("route: %d %s", resp.StatusCode, b)
	}
	// SIGHUP reloads (the handler is installed before the server answers).
	syscall.Kill(syscall.Getpid(), syscall.SIGHUP)
	for k := 0; !strings.Contains(log.String(), "serve: reloaded "+ck); k++ {
		if k == 200 {
			t.Fatalf("no reload after SIGHUP:\n%s", log.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	if !strings.Contains(log.String(), "serve: stopped") {
		t.Errorf("log:\n%s", log.String())
	}
}
