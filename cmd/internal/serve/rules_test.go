package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRouterModel(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		name   string
		router bool
		want   RouteParams
	}{
		{"router", true, RouteParams{}},
		{"gpt-4o", false, RouteParams{}},
		{"routerx", false, RouteParams{}},
		{"router:max-p", true, RouteParams{Rule: "max-p"}},
		{"router:shortlist", true, RouteParams{Rule: "shortlist", Shortlist: 3}},
		{"router:shortlist?k=5", true, RouteParams{Rule: "shortlist", Shortlist: 5}},
		{"router:margin?delta=0.02&default=mid", true, RouteParams{Rule: "margin", Margin: f(0.02), Default: "mid"}},
		{"router:min-p?p=0.6&k=2", true, RouteParams{Rule: "min-p", MinP: f(0.6), Shortlist: 2}},
		{"router:lambda?lambda=0.5", true, RouteParams{Rule: "lambda", Lambda: f(0.5)}},
	} {
		p, router, err := ParseRouterModel(c.name)
		if err != nil || router != c.router || fmt.Sprint(p.Rule, deref(p.MinP), deref(p.Lambda), deref(p.Margin), p.Shortlist, p.Default) !=
			fmt.Sprint(c.want.Rule, deref(c.want.MinP), deref(c.want.Lambda), deref(c.want.Margin), c.want.Shortlist, c.want.Default) {
			t.Errorf("%s: %+v %v %v, want %+v", c.name, p, router, err, c.want)
		}
	}
	for _, c := range []struct{ name, msg string }{
		{"router:best", `unknown rule "best": want router or router:<rule> with rule best-single, max-p, shortlist, margin, min-p or lambda`},
		{"router:shortlist?t=3", `rule shortlist has no parameter "t" (it takes k)`},
		{"router:margin?delta=0.1&x=1", `rule margin has no parameter "x" (it takes k, default, delta)`},
		{"router:shortlist?k=0", "k=0: want a whole number of models, at least 1"},
		{"router:shortlist?k=1&k=2", "parameter k is given 2 times"},
		{"router:min-p?p=high", "p=high is not a number"},
		{"router:margin", "rule margin needs its delta, for example router:margin?delta=0.05"},
		{"router:lambda", "rule lambda needs its lambda"},
		{"router:max-p?%zz", "not name=value pairs"},
	} {
		_, _, err := ParseRouterModel(c.name)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
}

func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}

// allUpstreams is an upstreams file sending big, mid and small to one fake
// upstream.
func allUpstreams(t *testing.T) string {
	up, _ := fakeUpstream(t, "all", nil)
	t.Setenv("KEY_ALL", "key-all")
	p := filepath.Join(t.TempDir(), "up.yaml")
	var b strings.Builder
	for _, n := range []string{"big", "mid", "small"} {
		fmt.Fprintf(&b, "- {name: %s, base_url: %s/v1, api_key_env: KEY_ALL}\n", n, up.URL)
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	return p
}

// TestChatReachesEveryRule sends a chat with each rule of the hand
// checkpoint (P 0.9/0.75/0.6, costs 10/3/1) and checks the model chosen:
// the same choices as /v1/route's.
func TestChatReachesEveryRule(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-", Upstreams: allUpstreams(t)})
	for _, c := range []struct{ name, model string }{
		{"router", "mid"}, // costs: min-p 0.7
		{"router:best-single", "big"},
		{"router:max-p", "big"},
		{"router:shortlist", "big"},
		{"router:shortlist?k=1", "big"},
		{"router:margin?delta=0.2&default=mid", "mid"},
		{"router:margin?delta=0.1&default=mid", "big"},
		{"router:min-p?p=0.8", "big"},
		{"router:min-p?p=0.6", "small"},
		{"router:lambda?lambda=1", "small"},
		{"router:lambda?lambda=0.05", "mid"},
		{"router:min-p?k=2", "mid"}, // the two best by mean P are big and mid
	} {
		code, body, h := f.do(t, "POST", "/v1/chat/completions", `{"model":"`+c.name+`","messages":[{"role":"user","content":"hi"}]}`)
		if code != 200 || h.Get("X-Jeirt-Model") != c.model {
			t.Errorf("%s: %d %s, model %q, want %s", c.name, code, body, h.Get("X-Jeirt-Model"), c.model)
		}
	}
	for _, c := range []struct{ name, msg string }{
		{"router:min-p?p=1.5", `"router:min-p?p=1.5": rule "min-p?p=1.5": p=1.5: not in [0, 1]`},
		{"router:margin?delta=0.1&default=nope", `"nope" is not a model of the checkpoint (it has 3: big, mid, small)`},
		{"router:margin?delta=0.1&k=1&default=small", `"small" is not one of the candidates (models, shortlist)`},
		{"router:shortlist?q=1", `has no parameter "q"`},
	} {
		code, body, _ := f.do(t, "POST", "/v1/chat/completions", `{"model":"`+c.name+`","messages":[{"role":"user","content":"hi"}]}`)
		e := decode[map[string]struct{ Message, Field string }](t, body)["error"]
		if code != 400 || e.Field != "model" || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: %d %+v, want field model and %q", c.name, code, e, c.msg)
		}
	}
	// /v1/route takes the shortlist rule too.
	code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"q","rule":"shortlist","shortlist":2,"models":["mid","small"]}`)
	if r := decode[Routed](t, body); code != 200 || r.Model != "mid" {
		t.Errorf("route shortlist: %d %s", code, body)
	}
}

// TestOpenAIModelList checks GET /v1/models against OpenAI's list shape and
// the richer view at /v1/jeirt/models.
func TestOpenAIModelList(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-", Upstreams: allUpstreams(t)})
	code, body, _ := f.do(t, "GET", "/v1/models", "")
	list := decode[struct {
		Object string
		Data   []OpenAIModel
	}](t, body)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.Created <= 0 || m.OwnedBy == "" {
			t.Errorf("entry %+v", m)
		}
	}
	want := "router router:best-single router:max-p router:shortlist router:margin?delta=0.05 router:min-p router:lambda?lambda=0.011 big mid small"
	if code != 200 || list.Object != "list" || strings.Join(ids, " ") != want {
		t.Errorf("GET /v1/models: %d %s\nids %v\nwant %s", code, body, ids, want)
	}
	if !strings.Contains(body, `"object":"list","data":[{"id":"router","object":"model","created":`) {
		t.Errorf("not OpenAI's shape: %s", body)
	}
	if code, body, _ := f.do(t, "GET", "/v1/models/router:max-p", ""); code != 200 || !strings.Contains(body, `"id":"router:max-p"`) {
		t.Errorf("retrieve: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "GET", "/v1/models/gpt-9", ""); code != 404 || !strings.Contains(body, `no model \"gpt-9\"`) {
		t.Errorf("retrieve unknown: %d %s", code, body)
	}
	code, body, _ = f.do(t, "GET", "/v1/jeirt/models", "")
	rich := decode[struct {
		Models []ModelInfo
		Router []string
	}](t, body)
	if code != 200 || len(rich.Models) != 3 || rich.Models[0].Upstream == "" || len(rich.Router) != 7 {
		t.Errorf("GET /v1/jeirt/models: %d %s", code, body)
	}
	// Without costs the cost rules are not listed.
	f = newFixture(t, Settings{Upstreams: allUpstreams(t)})
	_, body, _ = f.do(t, "GET", "/v1/models", "")
	if strings.Contains(body, "min-p") || strings.Contains(body, "lambda") || !strings.Contains(body, `"router:shortlist"`) {
		t.Errorf("without costs: %s", body)
	}
}

// TestServeRefusesUnroutable: a server whose upstreams name no model of the
// checkpoint (or, with costs, none with a price) refuses to start and says
// both lists and the closest names.
func TestServeRefusesUnroutable(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	writeHandCheckpoint(t, ck, []float64{0.9, 0.75, 0.6}, []string{"big-model", "mid", "small"}, false)
	up := filepath.Join(dir, "up.yaml")
	os.WriteFile(up, []byte("- {name: gpt-4o, base_url: http://127.0.0.1:1/v1}\n- {name: big, base_url: http://127.0.0.1:1/v1}\n"), 0o644)
	_, err := New(Settings{Checkpoint: ck, Upstreams: up})
	for _, want := range []string{"no model of the checkpoint " + ck + " has an upstream in " + up,
		"models of the checkpoint (3): big-model, mid, small", "names in " + up + " (2): big, gpt-4o",
		"closest checkpoint model to each unknown upstream name: big -> big-model, gpt-4o -> "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no routable upstream: %v\nwant %q", err, want)
		}
	}
	// Upstreams exist, but the default rule weighs cost and only the
	// model without an upstream has a price.
	costs := filepath.Join(dir, "costs.csv")
	os.WriteFile(costs, []byte("model,cost\nsmall,1\n"), 0o644)
	os.WriteFile(up, []byte("- {name: mid, base_url: http://127.0.0.1:1/v1}\n"), 0o644)
	_, err = New(Settings{Checkpoint: ck, Upstreams: up, Costs: costs})
	for _, want := range []string{`"router" could send a chat nowhere`, "with rule min-p", "models with a cost in " + costs + " (1): small", "names in " + up + " (1): mid"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no priced upstream: %v\nwant %q", err, want)
		}
	}
	// One routable model is enough; unknown names are logged.
	os.WriteFile(up, []byte("- {name: mid, base_url: http://127.0.0.1:1/v1}\n- {name: gpt-4o, base_url: http://127.0.0.1:1/v1}\n"), 0o644)
	var log []string
	if _, err := New(Settings{Checkpoint: ck, Upstreams: up, Log: func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(log, "\n"), `upstream "gpt-4o" of `+up+` is not a model of the checkpoint`) {
		t.Errorf("log: %v", log)
	}
}

// TestContentTypesAndChatLimit: a JSON body without a Content-Type or with
// curl's default for -d is read; a declared non-JSON type is 415; chat has
// its own, larger limit.
func TestContentTypesAndChatLimit(t *testing.T) {
	f := newFixture(t, Settings{Upstreams: allUpstreams(t), MaxBody: 4096, MaxChatBody: 8192})
	for _, c := range []struct {
		path, ct string
		status   int
	}{
		{"/v1/route", "", 200},
		{"/v1/route", "application/x-www-form-urlencoded", 200},
		{"/v1/route", "application/json; charset=utf-8", 200},
		{"/v1/predict", "", 200},
		{"/v1/route", "text/plain", 415},
		{"/v1/chat/completions", "multipart/form-data; boundary=x", 415},
		{"/v1/chat/completions", "", 200},
	} {
		body := `{"text":"q"}`
		if c.path == "/v1/predict" {
			body = `{"pairs":[{"model":"big","text":"q"}]}`
		} else if strings.Contains(c.path, "chat") {
			body = `{"model":"router","messages":[{"role":"user","content":"q"}]}`
		}
		req, _ := newRequest("POST", f.ts.URL+c.path, body)
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		resp, err := f.ts.Client().Do(req)
		if err != nil || resp.StatusCode != c.status {
			t.Errorf("%s with Content-Type %q: %v %v, want %d", c.path, c.ct, resp.StatusCode, err, c.status)
		}
	}
	long := `{"model":"router","messages":[{"role":"user","content":"` + strings.Repeat("x", 6000) + `"}]}`
	if code, body, _ := f.do(t, "POST", "/v1/chat/completions", long); code != 200 {
		t.Errorf("6,000-byte chat under an 8,192-byte chat limit: %d %s", code, body)
	}
	if code, body, _ := f.do(t, "POST", "/v1/chat/completions", strings.Replace(long, "x", "xx", -1)); code != 413 || !strings.Contains(body, "larger than 8192 bytes") {
		t.Errorf("12,000-byte chat: %d %s", code, body)
	}
}

func newRequest(method, url, body string) (*http.Request, error) {
	return http.NewRequest(method, url, strings.NewReader(body))
}
