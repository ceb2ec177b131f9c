package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// writeHandCheckpoint writes a checkpoint on the hash:8 encoder whose adapter
// maps every question to q = (1, 0), so model i with row (1 + logit(p_i), 0)
// answers any question with probability p_i (as in cmd/jeirt's route tests).
func writeHandCheckpoint(t testing.TB, dir string, ps []float64, names []string, replace bool) {
	t.Helper()
	enc, _ := encoder.NewHash(8)
	m := &model.JEIRT{InputDim: 8, Hidden: 2, Dim: 2, W1: make([]float32, 16), C1: make([]float32, 2),
		W2: make([]float32, 4), C2: []float32{1, 0}, Models: names, Items: []string{"known"}, Q: []float32{1, 0}}
	for _, p := range ps {
		m.M = append(m.M, float32(1+math.Log(p/(1-p))), 0)
	}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{
		Encoder: checkpoint.EncoderInfo{Spec: "hash:8", Fingerprint: enc.Fingerprint(), Dim: 8}}}
	if err := ck.Write(dir, replace); err != nil {
		t.Fatal(err)
	}
}

type fixture struct {
	dir, ck string
	srv     *Server
	ts      *httptest.Server
	token   string
}

// newFixture serves the hand checkpoint big/mid/small (P 0.9/0.75/0.6,
// costs 10/3/1) on a loopback test server.
func newFixture(t *testing.T, set Settings) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, ck: filepath.Join(dir, "ck"), token: set.Token}
	writeHandCheckpoint(t, f.ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"}, false)
	set.Checkpoint = f.ck
	if set.Costs == "-" {
		set.Costs = filepath.Join(dir, "costs.csv")
		os.WriteFile(set.Costs, []byte("model,cost\nbig,10\nmid,3\nsmall,1\n"), 0o644)
	}
	srv, err := New(set)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	f.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(f.ts.Close)
	return f
}

// do sends method path with body (JSON text) and returns status and body.
func (f *fixture) do(t testing.TB, method, path, body string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.ts.URL+path, rd)
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func decode[T any](t testing.TB, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return v
}

func TestRouteMatchesRouteCommand(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-"})
	cases := []struct {
		body, model string
		p           float64
		rule        string
	}{
		// The same rules and answers as TestRouteCommand of cmd/jeirt.
		{`{"text":"what is 2+2?","rule":"max-p"}`, "big", 0.9, "max-p"},
		// The rule reported is the rule applied, as route.ParseRule reads it.
		{`{"text":"what is 2+2?"}`, "mid", 0.75, "min-p?p=0.7"}, // costs: min-p 0.7 by default
		{`{"text":"q","min_p":0.8}`, "big", 0.9, "min-p?p=0.8"},
		{`{"text":"q","min_p":0.95}`, "big", 0.9, "min-p?p=0.95"}, // fallback
		{`{"text":"q","lambda":0.05}`, "mid", 0.75, "lambda?lambda=0.05"},
		{`{"text":"q","lambda":1}`, "small", 0.6, "lambda?lambda=1"},
		{`{"text":"q","rule":"margin","margin":0.2,"default":"mid"}`, "mid", 0.75, "margin?delta=0.2&default=mid"},
		{`{"text":"q","rule":"margin","margin":0.1,"default":"mid"}`, "big", 0.9, "margin?delta=0.1&default=mid"},
		{`{"text":"q","rule":"max-p","models":["small","mid"]}`, "mid", 0.75, "max-p"},
		{`{"text":"q","rule":"max-p","shortlist":1}`, "big", 0.9, "shortlist?k=1"},
		{`{"text":"q","rule":"shortlist?k=2"}`, "big", 0.9, "shortlist?k=2"},
		{`{"text":"q","rule":"margin?delta=0.2&default=mid"}`, "mid", 0.75, "margin?delta=0.2&default=mid"},
	}
	for _, c := range cases {
		code, body, _ := f.do(t, "POST", "/v1/route", c.body)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.body, code, body)
		}
		r := decode[Routed](t, body)
		if r.Model != c.model || math.Abs(r.P-c.p) > 1e-6 || r.Rule != c.rule || r.OutOfDomain {
			t.Errorf("%s: got %s P %.4f rule %s, want %s %.4f %s", c.body, r.Model, r.P, r.Rule, c.model, c.p, c.rule)
		}
		if r.Cost == nil {
			t.Errorf("%s: no cost", c.body)
		}
	}
	code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"q","min_p":0.95}`)
	if r := decode[Routed](t, body); code != 200 || !r.Fallback || len(r.Alternatives) != 2 {
		t.Errorf("fallback: %d %s", code, body)
	}
	code, body, _ = f.do(t, "POST", "/v1/route", `{"queries":[{"id":"a","text":"x"},{"text":"y"}],"rule":"max-p","top":1}`)
	res := decode[RouteResponse](t, body)
	if code != 200 || len(res.Results) != 2 || res.Results[0].ID != "a" || res.Results[1].ID != "2" ||
		res.Results[1].Model != "big" || len(res.Results[1].Alternatives) != 1 || res.Results[1].Alternatives[0].Model != "mid" {
		t.Errorf("batch: %d %s", code, body)
	}
}

func TestPredictModelsHealthMetrics(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-"})
	code, body, _ := f.do(t, "POST", "/v1/predict", `{"pairs":[{"model":"small","text":"a"},{"model":"big","text":"b"}]}`)
	p := decode[map[string][]Prediction](t, body)["predictions"]
	if code != 200 || len(p) != 2 || math.Abs(p[0].P-0.6) > 1e-6 || math.Abs(p[1].P-0.9) > 1e-6 {
		t.Errorf("predict: %d %s", code, body)
	}
	code, body, _ = f.do(t, "GET", "/v1/jeirt/models", "")
	ms := decode[struct{ Models []ModelInfo }](t, body).Models
	if code != 200 || len(ms) != 3 || ms[1].Name != "mid" || *ms[1].Cost != 3 || math.Abs(ms[1].MeanP-0.75) > 1e-6 {
		t.Errorf("models: %d %s", code, body)
	}
	if code, body, _ = f.do(t, "GET", "/healthz", ""); code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("healthz: %d %s", code, body)
	}
	f.do(t, "POST", "/v1/route", `{"text":"q","rule":"max-p"}`)
	code, body, _ = f.do(t, "GET", "/metrics", "")
	for _, want := range []string{`jeirt_routed_total{model="big",rule="max-p"} 1`, `jeirt_requests_total{code="200",route="predict"} 1`,
		"jeirt_out_of_domain_total 0", `jeirt_request_duration_seconds_count{route="route"} 1`, "jeirt_models 3", "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code != 200 {
		t.Errorf("metrics: %d", code)
	}
	// Admin routes are off without a token.
	if code, _, _ = f.do(t, "POST", "/admin/reload", ""); code != 404 {
		t.Errorf("reload without a token: %d, want 404", code)
	}
}

func TestTokenAndOnboarding(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-", Token: "s3cret"})
	f.token = ""
	if code, body, h := f.do(t, "POST", "/v1/route", `{"text":"q"}`); code != 401 || !strings.Contains(body, "bearer token") || h.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %s", code, body)
	}
	if code, _, _ := f.do(t, "GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz needs no token: %d", code)
	}
	f.token = "wrong"
	if code, _, _ := f.do(t, "GET", "/metrics", ""); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	f.token = "s3cret"
	var answers []string
	for k := 0; k < 40; k++ {
		answers = append(answers, fmt.Sprintf(`{"id":"n%d","text":"new question %d","correct":%v}`, k, k, k%5 != 0))
	}
	answers = append(answers, `{"id":"known","correct":true}`)
	code, body, _ := f.do(t, "POST", "/v1/models", `{"name":"newbie","cost":2,"answers":[`+strings.Join(answers, ",")+`]}`)
	if code != 201 {
		t.Fatalf("onboard: %d %s", code, body)
	}
	res := decode[struct {
		Checkpoint, Previous string
		NewItems             int `json:"new_items"`
	}](t, body)
	if res.Previous != f.ck || res.NewItems != 40 || res.Checkpoint != f.ck+".plus-newbie" {
		t.Errorf("onboard: %s", body)
	}
	if _, err := checkpoint.Load(f.ck); err != nil {
		t.Errorf("the old checkpoint is gone: %v", err)
	}
	if f.srv.Checkpoint() != res.Checkpoint {
		t.Errorf("serving %s, want %s", f.srv.Checkpoint(), res.Checkpoint)
	}
	// 41 answers, 33 right: the fitted P sits near 0.8 on every question.
	code, body, _ = f.do(t, "POST", "/v1/predict", `{"pairs":[{"model":"newbie","text":"anything"}]}`)
	p := decode[map[string][]Prediction](t, body)["predictions"]
	if code != 200 || len(p) != 1 || p[0].P < 0.7 || p[0].P > 0.86 {
		t.Errorf("predict newbie: %d %s", code, body)
	}
	code, body, _ = f.do(t, "POST", "/v1/route", `{"text":"q","models":["newbie","big"],"min_p":0.7}`)
	if r := decode[Routed](t, body); code != 200 || r.Model != "newbie" || *r.Cost != 2 {
		t.Errorf("route to newbie: %d %s", code, body)
	}
	// The onboarding cost survives a reload, which reads the new folder.
	if code, body, _ = f.do(t, "POST", "/admin/reload", ""); code != 200 || !strings.Contains(body, `"models":4`) {
		t.Errorf("reload: %d %s", code, body)
	}
	code, body, _ = f.do(t, "POST", "/v1/models", `{"name":"newbie","answers":[{"id":"known","correct":true}]}`)
	if code != 400 || !strings.Contains(body, "already in the checkpoint") {
		t.Errorf("duplicate onboarding: %d %s", code, body)
	}
}

func TestReloadUnderLoad(t *testing.T) {
	f := newFixture(t, Settings{Token: "t"})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	counts := map[string]int{}
	for c := 0; c < 8; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequest("POST", f.ts.URL+"/v1/route", strings.NewReader(`{"text":"reload me"}`))
				req.Header.Set("Authorization", "Bearer t")
				resp, err := f.ts.Client().Do(req)
				if err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode != 200 {
					errs = append(errs, fmt.Sprintf("%d %s", resp.StatusCode, b))
				} else {
					counts[decode[Routed](t, string(b)).Model]++
				}
				mu.Unlock()
			}
		}()
	}
	// Swap the best model back and forth under load; every third reload
	// finds a broken folder and must keep serving the previous checkpoint.
	for k := 0; k < 30; k++ {
		switch k % 3 {
		case 0:
			writeHandCheckpoint(t, f.ck, []float64{0.9, 0.75, 0.6}, []string{"big", "mid", "small"}, true)
		case 1:
			writeHandCheckpoint(t, f.ck, []float64{0.6, 0.75, 0.9}, []string{"big", "mid", "small"}, true)
		case 2:
			os.WriteFile(filepath.Join(f.ck, checkpoint.ManifestFile), []byte("{broken"), 0o644)
		}
		code, body, _ := f.do(t, "POST", "/admin/reload", "")
		if k%3 == 2 {
			if code != 500 || !strings.Contains(body, "still serving the previous checkpoint") {
				t.Errorf("broken reload: %d %s", code, body)
			}
		} else if code != 200 {
			t.Errorf("reload %d: %d %s", k, code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d failed requests while reloading, first: %s", len(errs), errs[0])
	}
	if counts["big"] == 0 || counts["small"] == 0 || counts["mid"] != 0 {
		t.Errorf("routed %v: want both big and small (the checkpoint swapped), never mid", counts)
	}
	_, body, _ := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(body, `jeirt_reloads_total{result="failed"} 10`) || !strings.Contains(body, `jeirt_reloads_total{result="ok"} 20`) {
		t.Errorf("reload metrics wrong:\n%s", grepLines(body, "reloads"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// fakeUpstream is an OpenAI-compatible server that answers in two SSE
// events (stream) or one JSON object, and records what it was sent.
func fakeUpstream(t *testing.T, name string, release <-chan struct{}) (*httptest.Server, *[]map[string]any) {
	var mu sync.Mutex
	var got []map[string]any
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer key-"+name {
			http.Error(w, "bad path or key", 401)
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		if req["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hello from %s\"}}]}\n\n", name)
			w.(http.Flusher).Flush()
			if release != nil {
				<-release // the client must have the first event before the second is written
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"model":%q,"choices":[{"message":{"role":"assistant","content":"hi"}}]}`, req["model"])
	}))
	t.Cleanup(ts.Close)
	return ts, &got
}

func TestChatForwardsAndStreams(t *testing.T) {
	release := make(chan struct{})
	bigUp, bigGot := fakeUpstream(t, "big", release)
	smallUp, _ := fakeUpstream(t, "small", nil)
	hangDone := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hangDone:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(hangDone) }) // runs first: frees the handler so Close does not wait
	dir := t.TempDir()
	up := filepath.Join(dir, "up.yaml")
	t.Setenv("KEY_BIG", "key-big")
	t.Setenv("KEY_SMALL", "key-small")
	os.WriteFile(up, []byte(fmt.Sprintf(`upstreams:
  - name: big
    base_url: %s/v1
    api_key_env: KEY_BIG
    model: big-upstream-name
  - name: small
    base_url: %s/v1/
    api_key_env: KEY_SMALL
  - name: mid
    base_url: %s/v1
`, bigUp.URL, smallUp.URL, hang.URL)), 0o644)
	f := newFixture(t, Settings{Upstreams: up, UpstreamTimeout: 300 * time.Millisecond})

	// Streaming: the first event arrives before the upstream finishes.
	req, _ := http.NewRequest("POST", f.ts.URL+"/v1/chat/completions", strings.NewReader(
		`{"model":"router:max-p","stream":true,"temperature":0.2,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi there"}]}]}`))
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("X-Jeirt-Model") != "big" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d, model %q, type %q", resp.StatusCode, resp.Header.Get("X-Jeirt-Model"), resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	if first != "data: {\"choices\":[{\"delta\":{\"content\":\"hello from big\"}}]}\n" {
		t.Errorf("first event %q", first)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if string(rest) != "\ndata: [DONE]\n\n" {
		t.Errorf("rest of stream %q", rest)
	}
	if g := (*bigGot)[0]; g["model"] != "big-upstream-name" || g["temperature"] != 0.2 || g["stream"] != true || len(g["messages"].([]any)) != 2 {
		t.Errorf("upstream got %v", g)
	}

	// Not streamed, routed among the models with upstreams restricted by a
	// direct name; then the failures.
	code, body, h := f.do(t, "POST", "/v1/chat/completions", `{"model":"small","messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 || h.Get("X-Jeirt-Model") != "small" || body != `{"model":"small","choices":[{"message":{"role":"assistant","content":"hi"}}]}` {
		t.Errorf("direct: %d %s %v", code, body, h)
	}
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"mid","messages":[{"role":"user","content":"hi"}]}`)
	if code != 502 || !strings.Contains(body, `upstream \"mid\"`) || !strings.Contains(body, "no answer within 300ms") {
		t.Errorf("hanging upstream: %d %s", code, body)
	}
	smallUp.Close()
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"small","messages":[{"role":"user","content":"hi"}]}`)
	if code != 502 || !strings.Contains(body, `upstream \"small\"`) {
		t.Errorf("closed upstream: %d %s", code, body)
	}
	t.Setenv("KEY_BIG", "wrong")
	code, body, _ = f.do(t, "POST", "/v1/chat/completions", `{"model":"router","messages":[{"role":"user","content":"hi"}]}`)
	if code != 502 || !strings.Contains(body, `upstream \"big\"`) || !strings.Contains(body, "401") {
		t.Errorf("upstream 401: %d %s", code, body)
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-", MaxBody: 4096, MaxBatch: 3})
	big := `{"text":"` + strings.Repeat("x", 5000) + `"}`
	cases := []struct {
		path, body string
		status     int
		field, msg string
	}{
		{"/v1/route", `{"text":`, 400, "", "the body ends early"},
		{"/v1/route", `{"text":"a"}{}`, 400, "", "data after the request object"},
		{"/v1/route", `not json`, 400, "", "malformed JSON at byte 2"},
		{"/v1/route", ``, 400, "", "empty request body"},
		{"/v1/route", `{"txt":"a"}`, 400, "txt", "unknown field"},
		{"/v1/route", `{"text":7}`, 400, "text", "want string, got JSON number"},
		{"/v1/route", `{"text":"  "}`, 400, "text", "empty text"},
		{"/v1/route", `{"queries":[]}`, 400, "queries", "empty batch"},
		{"/v1/route", `{"queries":[{"text":"a"},{"text":""}]}`, 400, "queries[1].text", "empty text"},
		{"/v1/route", `{"queries":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"}]}`, 400, "queries", "at most 3 per request"},
		{"/v1/route", `{"text":"a","queries":[{"text":"b"}]}`, 400, "text", "not both"},
		{"/v1/route", `{"text":"a","models":["big","gpt-9"]}`, 400, "models[1]", `"gpt-9" is not a model of the checkpoint`},
		{"/v1/route", `{"text":"a","rule":"best"}`, 400, "rule", `unknown rule "best"`},
		{"/v1/route", `{"text":"a","min_p":1.5}`, 400, "min_p", "not in [0, 1]"},
		{"/v1/route", `{"text":"a","rule":"lambda"}`, 400, "lambda", "rule lambda needs its lambda, for example 0.01"},
		{"/v1/route", `{"text":"a","rule":"margin","margin":0.1,"default":"nope"}`, 400, "default", `"nope" is not a model of the checkpoint`},
		{"/v1/route", `{"text":"a","rule":"margin","margin":0.1,"default":"big","models":["mid","small"]}`, 400, "default", `"big" is not one of the candidates (models, shortlist)`},
		{"/v1/route", `{"text":"a","rule":"margin","margin":-0.1}`, 400, "margin", "rule margin: margin -0.1: want a finite number >= 0"},
		{"/v1/route", `{"text":"a","rule":"lambda","lambda":-1}`, 400, "lambda", "rule lambda: lambda -1: want a finite number >= 0"},
		{"/v1/route", `{"text":"a","shortlist":-1}`, 400, "shortlist", "must not be negative"},
		{"/v1/route", `{"text":"a","top":-2}`, 400, "top", "must not be negative"},
		{"/v1/route", big, 413, "", "larger than 4096 bytes"},
		{"/v1/predict", `{"pairs":[{"model":"huge","text":"a"}]}`, 400, "pairs[0].model", `"huge" is not a model`},
		{"/v1/predict", `{"pairs":[{"model":"big","text":""}]}`, 400, "pairs[0].text", "empty text"},
		{"/v1/predict", `{"pairs":[]}`, 400, "pairs", "no (model, text) pairs"},
		{"/v1/chat/completions", `{"model":"router","messages":[]}`, 503, "", "no upstreams"},
		{"/v1/nothing", `{}`, 404, "", "no route POST /v1/nothing"},
		{"/v1/models", `{"name":"x","answers":[]}`, 404, "", "no route POST /v1/models"}, // onboarding is an admin route: off without a token
	}
	for _, c := range cases {
		code, body, _ := f.do(t, "POST", c.path, c.body)
		if code != c.status {
			t.Errorf("%s %.60s: status %d, want %d (%s)", c.path, c.body, code, c.status, body)
			continue
		}
		if c.msg == "" {
			continue
		}
		e := decode[map[string]struct{ Message, Field string }](t, body)["error"]
		if e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s %.60s: error %+v, want field %q and %q", c.path, c.body, e, c.field, c.msg)
		}
	}
	req, _ := http.NewRequest("POST", f.ts.URL+"/v1/route", strings.NewReader(`{"text":"a"}`))
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := f.ts.Client().Do(req); err != nil || resp.StatusCode != 415 {
		t.Errorf("text/plain body: %v %v", resp.StatusCode, err)
	}
}

func TestChatBadRequests(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "up.json")
	os.WriteFile(up, []byte(`[{"name":"big","base_url":"http://127.0.0.1:1/v1"}]`), 0o644)
	f := newFixture(t, Settings{Upstreams: up, Token: "t"})
	cases := []struct {
		body       string
		status     int
		field, msg string
	}{
		{`{"messages":[{"role":"user","content":"hi"}]}`, 400, "model", `want "router"`},
		{`{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 400, "model", `"gpt-9" is not a model of the upstreams file`},
		{`{"model":"router:best","messages":[{"role":"user","content":"hi"}]}`, 400, "model", `unknown rule "best"`},
		{`{"model":"router:min-p","messages":[{"role":"user","content":"hi"}]}`, 400, "model", "the server has no costs"},
		{`{"model":"router","messages":[{"role":"system","content":"hi"}]}`, 400, "messages", "no message with role user"},
		{`{"model":"router","messages":[{"role":"user","content":"  "}]}`, 400, "messages[0].content", "no text to route on"},
		{`{"model":"router","messages":"hi"}`, 400, "messages", "want an array"},
		{`{"model":"router","stream":"yes","messages":[]}`, 400, "stream", "want true or false"},
		{`{"model":"router"`, 400, "", "the body ends early"},
		{`{"model":"router","messages":[{"role":"user","content":"hi"}]}`, 502, "model", `upstream "big" (http://127.0.0.1:1/v1) failed`},
	}
	for _, c := range cases {
		code, body, _ := f.do(t, "POST", "/v1/chat/completions", c.body)
		e := decode[map[string]struct{ Message, Field string }](t, body)["error"]
		if code != c.status || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: %d %+v, want %d field %q and %q", c.body, code, e, c.status, c.field, c.msg)
		}
	}
	// Onboarding errors (an admin route: the token is set here).
	for _, c := range []struct{ body, field, msg string }{
		{`{"name":"","answers":[{"id":"known","correct":true}]}`, "name", "empty model name"},
		{`{"name":"x","answers":[]}`, "answers", "no answers"},
		{`{"name":"x","answers":[{"id":"known"}]}`, "answers[0].correct", "missing"},
		{`{"name":"x","answers":[{"id":"q1","correct":true}]}`, "answers[0].text", "send its text"},
		{`{"name":"x","answers":[{"id":"known","correct":true},{"id":"known","correct":false}]}`, "answers[1].id", "answered twice"},
		{`{"name":"big","answers":[{"id":"known","correct":true}]}`, "name", "already in the checkpoint"},
		{`{"name":"x","cost":-1,"answers":[{"id":"known","correct":true}]}`, "cost", "non-negative"},
	} {
		code, body, _ := f.do(t, "POST", "/v1/models", c.body)
		e := decode[map[string]struct{ Message, Field string }](t, body)["error"]
		if code != 400 || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("onboard %s: %d %+v, want field %q and %q", c.body, code, e, c.field, c.msg)
		}
	}
}

func TestUpstreamsFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, msg string }{
		{"upstreams: []", "no upstreams"},
		{"- name: a\n  base_url: ftp://x\n", `base_url "ftp://x" is not an http(s) URL`},
		{"- base_url: http://x\n", "upstream 1: no name"},
		{"- name: a\n  base_url: http://x\n  key: y\n", "want a list of upstreams"},
		{"- name: a\n  base_url: http://x/v1\n- name: a\n  base_url: http://y/v1\n", `name "a" is repeated`},
		{"- name: a\n  base_url: http://x/v1\n  api_key_env: JEIRT_TEST_UNSET_VAR\n", "JEIRT_TEST_UNSET_VAR is not set"},
		// The /v1 check: a base URL without a path, or a full endpoint.
		{"- name: a\n  base_url: http://127.0.0.1:8000\n", `base_url "http://127.0.0.1:8000" has no path: chats would go to http://127.0.0.1:8000/chat/completions, and OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM) serve under /v1: write base_url: http://127.0.0.1:8000/v1`},
		{"- name: a\n  base_url: https://u:pw-zz99@h.example/\n", `base_url "https://u:***@h.example/" has no path`},
		{"- name: a\n  base_url: http://h:8000/v1/chat/completions\n", `base_url "http://h:8000/v1/chat/completions" is an endpoint, not the API root that jeirt adds /chat/completions to: write base_url: http://h:8000/v1`},
		{"- name: a\n  base_url: http://h:8000/v1/models?key=zz-Secret-99\n", `is an endpoint, not the API root that jeirt adds /chat/completions to: write base_url: http://h:8000/v1?key=***`},
	} {
		p := filepath.Join(dir, "u.yaml")
		os.WriteFile(p, []byte(c.text), 0o644)
		if _, err := ReadUpstreams(p); err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: %v, want %q", c.text, err, c.msg)
		}
	}
}

func TestServeShutsDownGracefully(t *testing.T) {
	f := newFixture(t, Settings{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln, ServeSettings{Drain: 5 * time.Second}) }()
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/route", "application/json", strings.NewReader(`{"text":"q"}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("route over the listener: %v", err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// TestOutOfDomain gives the hand checkpoint a domain of two training texts:
// a query like them is routed by the rule, one unlike them is flagged and
// sent to the model with the highest mean P unless the request keeps the
// rule's choice; the metric counts the flags.
func TestOutOfDomain(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-"})
	enc, _ := encoder.NewHash(8)
	train := []string{"sort the list of numbers", "sort the list of words"}
	x, err := encoder.EncodeItems(context.Background(), enc, train, train, encoder.ItemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dom, err := checkpoint.NewDomain(append(x[0], x[1]...), 8, nil, 0.5) // two questions: a rate of 1/3 or more flags anything
	if err != nil {
		t.Fatal(err)
	}
	far := "Quelle est la capitale de la France ?"
	xf, _ := encoder.EncodeItems(context.Background(), enc, []string{far}, []string{far}, encoder.ItemOptions{})
	if !dom.OutOfDomain(xf[0]) || dom.OutOfDomain(x[0]) {
		t.Fatalf("threshold %.3f: far text at %.3f, training text at %.3f", dom.Threshold, dom.Distance(xf[0]), dom.Distance(x[0]))
	}
	b, _ := dom.Marshal()
	if err := os.WriteFile(filepath.Join(f.ck, checkpoint.DomainFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f = &fixture{dir: f.dir, ck: f.ck}
	srv, err := New(Settings{Checkpoint: f.ck, Costs: filepath.Join(f.dir, "costs.csv")})
	if err != nil {
		t.Fatal(err)
	}
	f.ts = httptest.NewServer(srv.Handler())
	defer f.ts.Close()
	for _, c := range []struct {
		body, model, rule string
		ood               bool
	}{
		{`{"text":"sort the list of numbers"}`, "mid", "min-p?p=0.7", false},
		{`{"text":"` + far + `"}`, "big", "out-of-domain", true},
		{`{"text":"` + far + `","keep_out_of_domain":true}`, "mid", "min-p?p=0.7", true},
	} {
		code, body, _ := f.do(t, "POST", "/v1/route", c.body)
		res := decode[Routed](t, body)
		if code != 200 || res.Model != c.model || res.Rule != c.rule || res.OutOfDomain != c.ood {
			t.Errorf("%s: %d %s, want %s by %s, out of domain %v", c.body, code, body, c.model, c.rule, c.ood)
		}
	}
	_, body, _ := f.do(t, "GET", "/metrics", "")
	if !strings.Contains(body, "jeirt_out_of_domain_total 2") {
		t.Errorf("metrics: %s", grepLines(body, "out_of_domain"))
	}
}

// Each onboarding names its folder from the first checkpoint's name and the
// model's, as add-model does: the sixth and later ones used to fail with
// "file name too long", each name appending to the one before.
func TestOnboardingNamesDoNotGrow(t *testing.T) {
	f := newFixture(t, Settings{Costs: "-", Token: "s3cret"})
	f.token = "s3cret"
	prev := f.ck
	for k := 1; k <= 8; k++ {
		name := fmt.Sprintf("model-%d-%s", k, strings.Repeat("x", 30))
		code, body, _ := f.do(t, "POST", "/v1/models", `{"name":"`+name+`","answers":[{"id":"known","correct":true}]}`)
		if code != 201 {
			t.Fatalf("onboarding %d: %d %s", k, code, body)
		}
		res := decode[struct{ Checkpoint, Previous string }](t, body)
		if want := f.ck + ".plus-" + name; res.Checkpoint != want || res.Previous != prev {
			t.Errorf("onboarding %d wrote %s, want %s", k, res.Checkpoint, want)
		}
		if _, err := checkpoint.Load(res.Checkpoint); err != nil {
			t.Error(err)
		}
		prev = res.Checkpoint
	}
	if code, body, _ := f.do(t, "POST", "/admin/reload", ""); code != 200 || !strings.Contains(body, `"models":11`) {
		t.Errorf("reload after 8 onboardings: %d %s", code, body)
	}
}
