package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenAINodeClient drives the server with the official OpenAI Node SDK
// (scripts/openai-client: `npm install --prefix scripts/openai-client`,
// which .ci/run does), in front of scripts/fake-upstream: models.list()
// must return the router's names and the models, chat must work with and
// without streaming, an error must reach the SDK as an API error with its
// status and OpenAI's type, param and code, a wrong method must be 405 with
// Allow, a stream the upstream cuts off must throw in the SDK's for-await
// loop, and an upstream's HTML page must be an API error. It skips when
// node, the package or the go tool is missing.
func TestOpenAINodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	client := filepath.Join("..", "..", "..", "scripts", "openai-client")
	if _, err := os.Stat(filepath.Join(client, "node_modules", "openai", "package.json")); err != nil {
		t.Skip("the openai package is not installed: npm install --prefix scripts/openai-client")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build scripts/fake-upstream")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-upstream")
	if out, err := exec.Command(goTool, "build", "-o", bin, "../../../scripts/fake-upstream").CombinedOutput(); err != nil {
		t.Fatalf("building scripts/fake-upstream: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	up := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0")
	stdout, _ := up.StdoutPipe()
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); up.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "fake-upstream: listening on ")
	if err != nil || !ok {
		t.Fatalf("fake-upstream said %q: %v", line, err)
	}
	// Two upstreams that fail as real ones were seen to: one cuts its
	// stream off after two chunks, the other answers an HTML page with 200.
	cut := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range []string{"Half ", "an "} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", word)
		}
	})
	page := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Sign in</h1></body></html>")
	})
	upFile := filepath.Join(dir, "up.yaml")
	os.WriteFile(upFile, []byte(fmt.Sprintf("- {name: big, base_url: %s, model: big-upstream}\n- {name: mid, base_url: %s}\n- {name: small, base_url: %s}\n"+
		"- {name: jeirt-check-truncated, base_url: %s}\n- {name: jeirt-check-html, base_url: %s}\n", base, base, base, cut, page)), 0o644)
	f := newFixture(t, Settings{Upstreams: upFile, Token: "tok"})

	cmd := exec.CommandContext(ctx, node, filepath.Join(client, "check.mjs"), f.ts.URL+"/v1", "tok")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("check.mjs: %v\n%s%s", err, out, stderr)
	}
	var got struct {
		Models    []string
		Retrieved string
		Chat      struct{ Model, Content string }
		Stream    struct {
			Chunks  int
			Content string
		}
		Error       nodeAPIError
		WrongMethod struct {
			Status int
			Allow  string
			Error  openAIError
		}
		Truncated struct {
			nodeAPIError
			Thrown  bool
			Chunks  int
			Content string
		}
		HTML struct {
			nodeAPIError
			Thrown bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	q := "Fix the off-by-one error in the pagination helper"
	if strings.Join(got.Models, " ") != "router router:best-single router:max-p router:shortlist router:margin?delta=0.05 big mid small jeirt-check-html jeirt-check-truncated" || got.Retrieved != "router" {
		t.Errorf("models.list(): %v, retrieve: %q", got.Models, got.Retrieved)
	}
	if got.Chat.Model != "big-upstream" || got.Chat.Content != "echo from big-upstream: "+q {
		t.Errorf("chat: %+v", got.Chat)
	}
	if got.Stream.Content != "echo from big-upstream: "+q || got.Stream.Chunks < 5 {
		t.Errorf("stream: %+v", got.Stream)
	}
	if e := got.Error; e.Status != 400 || e.Name != "BadRequestError" || e.Type != "invalid_request_error" || str(e.Param) != "model" || str(e.Code) != "<null>" ||
		!strings.Contains(e.Message, `unknown rule "best"`) {
		t.Errorf("error: %+v (param %s, code %s)", e, str(e.Param), str(e.Code))
	}
	if m := got.WrongMethod; m.Status != 405 || m.Allow != "POST" || m.Error.Type != "invalid_request_error" || str(m.Error.Code) != "method_not_allowed" {
		t.Errorf("GET /v1/chat/completions: %+v", m)
	}
	// The SDK's for-await loop throws on the cut stream, after the chunks
	// that did arrive, with OpenAI's error object.
	if c := got.Truncated; !c.Thrown || c.Name != "APIError" || c.Chunks != 2 || c.Content != "Half an " || c.Type != "api_error" ||
		str(c.Code) != "upstream_stream_truncated" || !strings.Contains(c.Message, `upstream "jeirt-check-truncated"`) ||
		!strings.Contains(c.Message, "closed the stream after 2 events without data: [DONE] or a finish reason: the answer is incomplete") {
		t.Errorf("truncated stream: %+v (code %s)", c, str(c.Code))
	}
	if h := got.HTML; !h.Thrown || h.Status != 502 || h.Name != "InternalServerError" || h.Type != "api_error" || str(h.Code) != "upstream_invalid_response" ||
		!strings.Contains(h.Message, "answered 200 OK with text/html, not the JSON of a chat completion (is base_url the API root, …/v1?): <html><body><h1>Sign in</h1></body></html>") {
		t.Errorf("HTML upstream: %+v (code %s)", h, str(h.Code))
	}
}

// nodeAPIError is what check.mjs reports of an error the SDK threw.
type nodeAPIError struct {
	Status  int
	Name    string
	Message string
	Type    string
	Param   *string
	Code    *string
}
