package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
)

// syncLog is a log a test reads while the server writes it.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// openAIError is OpenAI's error object as a client decodes it; Param and
// Code are pointers to tell null from "".
type openAIError struct {
	Message string
	Type    string
	Param   *string
	Code    *string
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// upstreamsFile writes an upstreams file naming each model's base URL.
func upstreamsFile(t *testing.T, pairs ...string) string {
	t.Helper()
	var b strings.Builder
	for k := 0; k < len(pairs); k += 2 {
		fmt.Fprintf(&b, "- {name: %q, base_url: %q}\n", pairs[k], pairs[k+1])
	}
	p := filepath.Join(t.TempDir(), "up.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestErrorObjectsAndMethods(t *testing.T) {
	dead := "http://127.0.0.1:1/v1"
	f := newFixture(t, Settings{Upstreams: upstreamsFile(t, "big", dead), Token: "tok"})
	cases := []struct {
		method, path, body string
		status             int
		typ, param, code   string
		msg                string
	}{
		{"POST", "/v1/route", `{"text":7}`, 400, "invalid_request_error", "text", "<null>", "want string, got JSON number"},
		{"POST", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "model", "model_not_found", `"gpt-9" is not a model of the upstreams file`},
		{"GET", "/v1/models/gpt-9", "", 404, "invalid_request_error", "model", "model_not_found", `no model "gpt-9"`},
		{"POST", "/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`, 502, "api_error", "model", "upstream_unreachable", `upstream "big" (http://127.0.0.1:1/v1) failed`},
		{"GET", "/v1/chat/completions", "", 405, "invalid_request_error", "<null>", "method_not_allowed", "GET /v1/chat/completions: this route answers POST"},
		{"DELETE", "/v1/models", "", 405, "invalid_request_error", "<null>", "method_not_allowed", "this route answers GET, HEAD, POST"},
		{"GET", "/v1/nothing", "", 404, "invalid_request_error", "<null>", "<null>", "no route GET /v1/nothing"},
		{"POST", "/v1/route", strings.Repeat(" ", 2<<20), 413, "invalid_request_error", "<null>", "request_too_large", "larger than"},
	}
	for _, c := range cases {
		code, body, h := f.do(t, c.method, c.path, c.body)
		e := decode[map[string]openAIError](t, body)["error"]
		if code != c.status || e.Type != c.typ || str(e.Param) != c.param || str(e.Code) != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s %s: %d %+v (param %s, code %s), want %d %s param %s code %s and %q", c.method, c.path, code, e, str(e.Param), str(e.Code), c.status, c.typ, c.param, c.code, c.msg)
		}
		if c.status == 405 && h.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
	if _, _, h := f.do(t, "GET", "/v1/chat/completions", ""); h.Get("Allow") != "POST" {
		t.Errorf("Allow %q, want POST", h.Get("Allow"))
	}
	f.token = "wrong"
	code, body, _ := f.do(t, "GET", "/v1/models", "")
	if e := decode[map[string]openAIError](t, body)["error"]; code != 401 || e.Type != "authentication_error" || str(e.Code) != "invalid_api_key" {
		t.Errorf("wrong token: %d %s", code, body)
	}
}

// chatUpstream answers every chat with handler's bytes.
func chatUpstream(t *testing.T, h http.HandlerFunc) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

func TestUpstreamAnswersThatAreNotChats(t *testing.T) {
	html := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>It works</body></html>\n")
	})
	cut := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		// the upstream dies here: no finish reason, no [DONE]
	})
	finished := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n") // complete, if without [DONE]
	})
	half := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "400")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"Hel`)
	})
	redirect := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
	})
	limited := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "20")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	})
	picky := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"max_tokens is too large: 999999.","type":"invalid_request_error","param":"max_tokens","code":null}}`)
	})
	ignores := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) { // ignores "stream": true
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
	})
	mislabelled := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	var log syncLog
	f := newFixture(t, Settings{Log: progress.LogTo(&log), Upstreams: upstreamsFile(t, "big", html, "mid", cut, "small", finished, "half", half, "moved", redirect,
		"limited", limited, "picky", picky, "ignores", ignores, "mislabelled", mislabelled)})

	// The client's faults pass on with the upstream's status and error.
	code, body, h := f.do(t, "POST", "/v1/chat/completions", `{"model":"limited","messages":[{"role":"user","content":"hi"}]}`)
	e := decode[map[string]openAIError](t, body)["error"]
	if code != 429 || h.Get("Retry-After") != "20" || e.Type != "requests" || str(e.Code) != "rate_limit_exceeded" || str(e.Param) != "<null>" ||
		e.Message != `upstream "limited" (`+limited+`) answered 429 Too Many Requests: Rate limit reached for requests` {
		t.Errorf("429 upstream: %d %s %v", code, body, h)
	}
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"picky","max_tokens":999999,"messages":[{"role":"user","content":"hi"}]}`)
	e = decode[map[string]openAIError](t, body)["error"]
	if code != 400 || e.Type != "invalid_request_error" || str(e.Param) != "max_tokens" || str(e.Code) != "<null>" || !strings.Contains(e.Message, "max_tokens is too large: 999999.") {
		t.Errorf("400 upstream: %d %s", code, body)
	}
	// A streamed chat answered as JSON would be an empty stream to an SDK.
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"ignores","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if e := decode[map[string]openAIError](t, body)["error"]; code != 502 || str(e.Code) != "upstream_invalid_response" ||
		!strings.Contains(e.Message, "answered a streamed chat with application/json, not server-sent events (text/event-stream)") {
		t.Errorf("JSON for a stream: %d %s", code, body)
	}
	if code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"ignores","messages":[{"role":"user","content":"hi"}]}`); code != 200 {
		t.Errorf("the same not streamed: %d %s", code, body)
	}
	if code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"mislabelled","stream":true,"messages":[{"role":"user","content":"hi"}]}`); code != 200 ||
		strings.Contains(body, "error") || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("events under text/plain: %d %q", code, body)
	}

	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
	e = decode[map[string]openAIError](t, body)["error"]
	if code != 502 || str(e.Code) != "upstream_invalid_response" || e.Type != "api_error" ||
		!strings.Contains(e.Message, `answered 200 OK with text/html; charset=utf-8, not the JSON of a chat completion (is base_url the API root, …/v1?): <!DOCTYPE html> <html><head><title>Welcome to nginx!</title>`) {
		t.Errorf("HTML upstream: %d %s", code, body)
	}

	code, body, h = f.do(t, "POST", "/v1/chat/completions", `{"model":"mid","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || len(events) != 2 || !strings.Contains(events[0], `"Hel"`) {
		t.Fatalf("truncated stream: %d %q", code, body)
	}
	last := decode[map[string]openAIError](t, strings.TrimPrefix(strings.TrimSpace(events[1]), "data: "))["error"]
	if last.Type != "api_error" || str(last.Code) != "upstream_stream_truncated" ||
		!strings.Contains(last.Message, `closed the stream after 1 event without data: [DONE] or a finish reason: the answer is incomplete`) {
		t.Errorf("truncation event %+v", last)
	}
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"small","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || strings.Contains(body, "error") || strings.Count(body, "data: ") != 2 {
		t.Errorf("a stream ended by its finish reason: %d %q", code, body)
	}
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"half","messages":[{"role":"user","content":"hi"}]}`)
	if e := decode[map[string]openAIError](t, body)["error"]; code != 502 || !strings.Contains(e.Message, "stopped mid-answer after 57 bytes: unexpected EOF") {
		t.Errorf("a body cut off: %d %s", code, body)
	}
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"moved","messages":[{"role":"user","content":"hi"}]}`)
	if e := decode[map[string]openAIError](t, body)["error"]; code != 502 || str(e.Code) != "upstream_redirect" ||
		!strings.Contains(e.Message, "answered 307 Temporary Redirect to /v2/chat/completions: a chat is never re-sent by a redirect") {
		t.Errorf("a redirect: %d %s", code, body)
	}
	if !strings.Contains(log.String(), `serve: upstream "mid" (`+cut+`) closed the stream after 1 event`) {
		t.Errorf("log:\n%s", log.String())
	}
	_, body, _ = f.do(t, "GET", "/metrics", "")
	for _, want := range []string{`jeirt_upstream_failures_total{reason="truncated",upstream="mid"} 1`, `jeirt_upstream_failures_total{reason="not_json",upstream="big"} 1`,
		`jeirt_upstream_failures_total{reason="cut",upstream="half"} 1`, `jeirt_upstream_failures_total{reason="redirect",upstream="moved"} 1`,
		`jeirt_upstream_failures_total{reason="refused",upstream="limited"} 1`, `jeirt_upstream_failures_total{reason="not_json",upstream="ignores"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(body, "upstream_failures"))
		}
	}
	if strings.Contains(body, `upstream="small"`) {
		t.Errorf("a complete stream counted as a failure:\n%s", grepLines(body, "upstream_failures"))
	}
}

func TestProbeUpstreams(t *testing.T) {
	ok := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[]}`)
	})
	noKey := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, `{"error":{"message":"bad key"}}`, 401) })
	notFound := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	page := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>hello</html>") })
	var log syncLog
	f := newFixture(t, Settings{Log: progress.LogTo(&log), Upstreams: upstreamsFile(t, "big", ok, "mid", "http://127.0.0.1:1/v1", "small", noKey, "nf", notFound, "page", page)})
	got := f.srv.probeUpstreams(context.Background(), 2*time.Second)
	want := []string{
		`upstream "mid" (http://127.0.0.1:1/v1) is unreachable now (Get "http://127.0.0.1:1/v1/models": dial tcp 127.0.0.1:1: connect: connection refused): chats routed to it will fail (502) until it answers`,
		`upstream "nf" (` + notFound + `) answered 404 to GET …/models: is base_url the API root that /chat/completions is under (…/v1)?`,
		`upstream "page" (` + page + `) answered GET …/models with text/html; charset=utf-8, not JSON: is base_url an OpenAI-compatible API root (…/v1)? <html>hello</html>`,
		`upstream "small" (` + noKey + `) refused the key of api_key_env  on GET …/models (401 Unauthorized): {"error":{"message":"bad key"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("probe warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(log.String(), "serve: warning: "+want[0]) {
		t.Errorf("log:\n%s", log.String())
	}
}

// A reload that finds a FIFO in the checkpoint folder used to block for
// ever, and every later reload behind it: now it fails after the deadline,
// or when the client goes away, the previous checkpoint keeps serving, and
// the next reload, once the folder is repaired, works.
func TestReloadNeverWedges(t *testing.T) {
	var log syncLog
	f := newFixture(t, Settings{Token: "t", ReloadTimeout: 300 * time.Millisecond, Log: progress.LogTo(&log)})
	manifest := filepath.Join(f.ck, checkpoint.ManifestFile)
	good, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(manifest)
	if err := syscall.Mkfifo(manifest, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// Free the reads left blocked on the FIFO when the test ends.
	moved := filepath.Join(f.dir, "fifo")
	defer func() {
		for k := 0; k < maxStuckLoads; k++ {
			if w, err := os.OpenFile(moved, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}()
	start := time.Now()
	code, body, _ := f.do(t, "POST", "/admin/reload", "")
	e := decode[map[string]openAIError](t, body)["error"]
	if code != 500 || str(e.Code) != "reload_failed" || !strings.Contains(e.Message, "took longer than 300ms (is one of its files a FIFO") ||
		!strings.Contains(e.Message, "still serving the previous checkpoint") || time.Since(start) > 5*time.Second {
		t.Errorf("reload on a FIFO: %d %s after %v", code, body, time.Since(start))
	}
	// The client going away ends the reload too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/admin/reload", nil)
	req.Header.Set("Authorization", "Bearer t")
	if _, err := f.ts.Client().Do(req); err == nil {
		t.Errorf("a reload the client gave up on answered")
	}
	cancel()
	// Still serving, the SIGHUP path (Reload) is not blocked either.
	if code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"q"}`); code != 200 || !strings.Contains(body, `"model":"big"`) {
		t.Errorf("serving during the stuck reads: %d %s", code, body)
	}
	if err := f.srv.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Reload on a FIFO: %v", err)
	}
	// Repair the folder: the next reload works, with the new checkpoint.
	os.Rename(manifest, moved) // keep the FIFO for the deferred unblocking
	if err := os.WriteFile(manifest, good, 0o644); err != nil {
		t.Fatal(err)
	}
	writeHandCheckpoint(t, f.ck, []float64{0.6, 0.75, 0.9}, []string{"big", "mid", "small"}, true)
	if code, body, _ := f.do(t, "POST", "/admin/reload", ""); code != 200 {
		t.Fatalf("reload after the repair: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"q","rule":"max-p"}`); code != 200 || !strings.Contains(body, `"model":"small"`) {
		t.Errorf("after the repair: %d %s", code, body)
	}
	if !strings.Contains(log.String(), "still serving the previous checkpoint") {
		t.Errorf("log:\n%s", log.String())
	}
}

// An upstream that begins its answer and then stalls: a chat not streamed
// is a 502 saying so, a streamed one ends with the error event.
func TestUpstreamStallsMidAnswer(t *testing.T) {
	stall := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "event-stream") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n")
		} else {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[`)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	f := newFixture(t, Settings{Upstreams: upstreamsFile(t, "big", stall), UpstreamTimeout: 300 * time.Millisecond})
	code, body, _ := f.do(t, "POST", "/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
	if e := decode[map[string]openAIError](t, body)["error"]; code != 502 || str(e.Code) != "upstream_timeout" || !strings.Contains(e.Message, "did not finish its answer within 300ms") {
		t.Errorf("stalled answer: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", f.ts.URL+"/v1/chat/completions", strings.NewReader(`{"model":"big","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"code":"upstream_stream_truncated"`) || !strings.Contains(string(b), "did not finish the stream within 300ms after 1 event") {
		t.Errorf("stalled stream: %d %q", resp.StatusCode, b)
	}
}

// A negative --reload-timeout is refused when the server starts (every
// reload would fail at once).
func TestNegativeReloadTimeout(t *testing.T) {
	_, err := New(Settings{Checkpoint: t.TempDir(), ReloadTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "serve: reload-timeout -1s: want a positive duration") {
		t.Errorf("New with ReloadTimeout -1s: %v", err)
	}
}
