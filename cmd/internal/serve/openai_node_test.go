package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
// without streaming, and an error must reach the SDK as an API error with
// its status. It skips when node, the package or the go tool is missing.
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
	upFile := filepath.Join(dir, "up.yaml")
	os.WriteFile(upFile, []byte(fmt.Sprintf("- {name: big, base_url: %s, model: big-upstream}\n- {name: mid, base_url: %s}\n- {name: small, base_url: %s}\n", base, base, base)), 0o644)
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
		Error struct {
			Status  int
			Message string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	q := "Fix the off-by-one error in the pagination helper"
	if strings.Join(got.Models, " ") != "router router:best-single router:max-p router:shortlist router:margin?delta=0.05 big mid small" || got.Retrieved != "router" {
		t.Errorf("models.list(): %v, retrieve: %q", got.Models, got.Retrieved)
	}
	if got.Chat.Model != "big-upstream" || got.Chat.Content != "echo from big-upstream: "+q {
		t.Errorf("chat: %+v", got.Chat)
	}
	if got.Stream.Content != "echo from big-upstream: "+q || got.Stream.Chunks < 5 {
		t.Errorf("stream: %+v", got.Stream)
	}
	if got.Error.Status != 400 || !strings.Contains(got.Error.Message, `unknown rule "best"`) {
		t.Errorf("error: %+v", got.Error)
	}
}
