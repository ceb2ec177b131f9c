package serve

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model/progress"
)

// A client that leaves mid-stream is a client disconnect: counted in
// jeirt_client_disconnects_total and said in the log, never an upstream
// failure (the upstream was still answering).
func TestClientLeavingMidStream(t *testing.T) {
	released := make(chan struct{})
	base := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"))
		w.(http.Flusher).Flush()
		select { // the answer goes on until serve hangs up
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		close(released)
	})
	up := filepath.Join(t.TempDir(), "up.yaml")
	os.WriteFile(up, []byte("- {name: big, base_url: "+base+"}\n"), 0o644)
	var log syncLog
	f := newFixture(t, Settings{Upstreams: up, Log: progress.LogTo(&log), UpstreamTimeout: 10 * time.Second})

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"big","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "data: ") {
		t.Fatalf("first line %q, %v", first, err)
	}
	cancel() // the client leaves
	resp.Body.Close()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not hang up on the upstream when the client left")
	}
	var metrics string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, metrics, _ = f.do(t, "GET", "/metrics", "")
		if strings.Contains(metrics, `jeirt_client_disconnects_total{upstream="big"} 1`) {
			break
		}
	}
	if !strings.Contains(metrics, `jeirt_client_disconnects_total{upstream="big"} 1`) {
		t.Errorf("no client disconnect counted:\n%s", grepLines(metrics, "jeirt_client_disconnects"))
	}
	if got := grepLines(metrics, "jeirt_upstream_failures_total{"); got != "" {
		t.Errorf("the client leaving was counted as an upstream failure:\n%s", got)
	}
	if want := `serve: the client went away during the stream of upstream "big", after 1 event`; !strings.Contains(log.String(), want) {
		t.Errorf("log %q, want %q", log.String(), want)
	}
}
