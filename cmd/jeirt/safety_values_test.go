package main

// A crafted-input corpus of values that must never turn into a silently
// wrong answer: weights that overflow in use, manifests that do not belong
// to their weights, degenerate and sparse data, undefined statistics,
// upstreams that echo secrets. Each case asserts that jeirt refuses with an
// error naming what is wrong, or answers with an explicit n/a, null or
// converged false, and never with NaN, a made-up 0 or a leaked key.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jeirt/jeirt/cmd/internal/serve"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/synth"
	"github.com/jeirt/jeirt/train/pipeline"
)

// svHand writes the hand checkpoint of route_test.go (hash:8 encoder,
// models big/mid/small answering any question with P 0.9/0.75/0.6) after
// edit has changed its weights, and returns its folder.
func svHand(t *testing.T, edit func(m *model.JEIRT)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ck")
	enc, _ := encoder.NewHash(8)
	m := &model.JEIRT{InputDim: 8, Hidden: 2, Dim: 2, W1: make([]float32, 16), C1: make([]float32, 2),
		W2: make([]float32, 4), C2: []float32{1, 0}, Models: []string{"big", "mid", "small"}, Items: []string{"known"}, Q: []float32{1, 0}}
	for _, p := range []float64{0.9, 0.75, 0.6} {
		m.M = append(m.M, float32(1+math.Log(p/(1-p))), 0)
	}
	if edit != nil {
		edit(m)
	}
	ck := &checkpoint.Checkpoint{Model: m, Manifest: checkpoint.Manifest{
		Encoder: checkpoint.EncoderInfo{Spec: "hash:8", Fingerprint: enc.Fingerprint(), Dim: 8}}}
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fill(v []float32, x float32) {
	for k := range v {
		v[k] = x
	}
}

// svQuery is the query the overflow cases route, and its hash:8 vector.
const svQuery = "how do I fix a failing django migration?"

func svQueryVector(t *testing.T) []float32 {
	enc, _ := encoder.NewHash(8)
	v, err := enc.Encode(context.Background(), []string{svQuery})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// svTrain trains a small JE-IRT run (hash:16, epochs epochs, no baselines)
// into dir/name and returns the checkpoint folder.
func svTrain(t *testing.T, dir, name string, epochs int) string {
	t.Helper()
	data := filepath.Join(dir, "responses.csv")
	if _, err := os.Stat(data); err != nil {
		r, _, err := synth.Generate(synth.Options{Kind: "jeirt", Models: 12, Items: 60, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if err := read.WriteLongCSV(data, r); err != nil {
			t.Fatal(err)
		}
		if err := read.WriteItemsCSV(filepath.Join(dir, "items.csv"), r); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeFile(t, filepath.Join(dir, name+".yaml"), fmt.Sprintf(`data: {responses: responses.csv, items: items.csv}
encoder: {spec: "hash:16"}
model: {dim: 4}
train: {epochs: %d, patience: 0}
output: %s
`, epochs, name))
	if _, log, err := runSplit(t, newTrainCmd(), "--config", cfg, "--no-baselines"); err != nil {
		t.Fatalf("train: %v\n%s", err, log)
	}
	return filepath.Join(dir, name)
}

// svRehash makes the manifest of the checkpoint in dir record the SHA-256 of
// its files as they are now: a hand edit of the weights that also fixes the
// hashes, so that what is checked next is the weights themselves.
func svRehash(t *testing.T, dir string) {
	t.Helper()
	svEditManifest(t, dir, func(man map[string]any) {
		sums := man["sha256"].(map[string]any)
		for name := range sums {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			sum := sha256.Sum256(b)
			sums[name] = hex.EncodeToString(sum[:])
		}
	})
}

// svEditManifest rewrites dir's manifest.json through f (as a map, the way
// a hand or another tool edits it).
func svEditManifest(t *testing.T, dir string, f func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, checkpoint.ManifestFile)
	var man map[string]any
	raw, _ := os.ReadFile(p)
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	f(man)
	raw, _ = json.MarshalIndent(man, "", "  ")
	os.WriteFile(p, raw, 0o644)
}

// svCopy copies the file name of folder src over the one of folder dst.
func svCopy(t *testing.T, src, dst, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustFail runs cmd and wants an error holding every one of want.
func mustFail(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one naming %q", what, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not name %q", what, err, w)
		}
	}
}

// svServe serves the checkpoint ck (with upstreams, when not "") on a test
// server and returns it, with the server's log.
func svServe(t *testing.T, ck, upstreams string) (*httptest.Server, *syncBuffer) {
	t.Helper()
	var log syncBuffer
	srv, err := serve.New(serve.Settings{Checkpoint: ck, Upstreams: upstreams, Log: progress.LogTo(&log)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, &log
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// svUpstreams writes an upstreams file naming big at baseURL with the key in
// SV_UPSTREAM_KEY.
func svUpstreams(t *testing.T, baseURL, key string) string {
	t.Helper()
	t.Setenv("SV_UPSTREAM_KEY", key)
	return writeFile(t, filepath.Join(t.TempDir(), "up.yaml"), fmt.Sprintf("- name: big\n  base_url: %s\n  api_key_env: SV_UPSTREAM_KEY\n", baseURL))
}

// echoingUpstream answers every request as OpenAI does for a bad key: 401
// with the key it was sent echoed in the body (and, when inHeader, in a
// header of a 200 answer instead).
func echoingUpstream(t *testing.T, inHeader bool) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if inHeader {
			w.Header().Set("X-Request-Id", "req-for "+auth)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"hi"}}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`, auth)
	}))
	t.Cleanup(ts.Close)
	return ts
}

const svKey = "sk-proj-AbC123dEf456GhI789jKl012MnO345pQr678"

// svFit runs irt fit on the file data with args into a new folder and
// returns what it printed, its fit.json and the folder.
func svFit(t *testing.T, data string, args ...string) (string, map[string]any, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "fit")
	printed, err := runCmd(t, newIRTCmd(), append([]string{"fit", "--data", data, "--out", out}, args...)...)
	if err != nil {
		t.Fatalf("irt fit %v: %v\n%s", args, err, printed)
	}
	return printed, readJSONMap(t, filepath.Join(out, "fit.json")), out
}

// svConstant writes a wide file of models x items all answered correctly.
func svConstant(t *testing.T, dir string, models, items int) string {
	var b strings.Builder
	b.WriteString("model")
	for j := 1; j <= items; j++ {
		fmt.Fprintf(&b, ",i%d", j)
	}
	for i := 0; i < models; i++ {
		fmt.Fprintf(&b, "\nm%d%s", i, strings.Repeat(",1", items))
	}
	return writeFile(t, filepath.Join(dir, "all.csv"), b.String()+"\n")
}

func readJSONMap(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	readJSONFile(t, path, &m)
	return m
}

func TestSafetyValuesCorpus(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		// Overflowing weights: finite in the file, infinite in use.
		{"c1 overflows: route refuses, naming the weights and c1", func(t *testing.T) {
			ck := svHand(t, func(m *model.JEIRT) { fill(m.C1, 3e38); fill(m.W2, 1) })
			q := writeFile(t, filepath.Join(t.TempDir(), "q.txt"), svQuery+"\n")
			out, _, err := runSplit(t, newRouteCmd(), q, "--checkpoint", ck)
			mustFail(t, "route", err, filepath.Join(ck, "model.safetensors"), "tensor c1", "not finite")
			if strings.Contains(out, "NaN") {
				t.Errorf("route printed NaN: %s", out)
			}
		}},
		{"W2 overflows: route names W2", func(t *testing.T) {
			ck := svHand(t, func(m *model.JEIRT) { fill(m.C1, 1); fill(m.W2, 3e38) })
			q := writeFile(t, filepath.Join(t.TempDir(), "q.txt"), svQuery+"\n")
			_, _, err := runSplit(t, newRouteCmd(), q, "--checkpoint", ck)
			mustFail(t, "route", err, "tensor W2", "W2·relu(W1·x + c1) + c2")
		}},
		{"W1 overflows in the hidden layer: route names W1", func(t *testing.T) {
			x := svQueryVector(t)
			l1 := 0.0
			for _, v := range x {
				l1 += math.Abs(float64(v))
			}
			if l1 < 1.2 {
				t.Fatalf("the query's vector has |x|_1 = %v; the case needs more than 3.4e38/3e38", l1)
			}
			ck := svHand(t, func(m *model.JEIRT) {
				for k := range m.W1 { // W1·x = 3e38·|x|_1 in both hidden units
					m.W1[k] = float32(math.Copysign(3e38, float64(x[k%8])))
				}
			})
			q := writeFile(t, filepath.Join(t.TempDir(), "q.txt"), svQuery+"\n")
			_, _, err := runSplit(t, newRouteCmd(), q, "--checkpoint", ck)
			mustFail(t, "route", err, "tensor W1", "relu(W1·x + c1) overflows")
		}},
		{"c1 overflows: eval of new items refuses", func(t *testing.T) {
			ck := svHand(t, func(m *model.JEIRT) { fill(m.C1, 3e38); fill(m.W2, 1) })
			dir := t.TempDir()
			data := writeFile(t, filepath.Join(dir, "r.csv"), "model,item,correct\nbig,new1,1\nmid,new1,0\n")
			items := writeFile(t, filepath.Join(dir, "items.csv"), "item_id,text\nnew1,"+svQuery+"\n")
			out, _, err := runSplit(t, newEvalCmd(), "--checkpoint", ck, "--data", data, "--items", items)
			mustFail(t, "eval", err, "tensor c1", `question "new1"`)
			if strings.Contains(out, "NaN") {
				t.Errorf("eval printed NaN: %s", out)
			}
		}},
		{"c1 overflows: serve answers 500 on route, predict and chat, counted as errors", func(t *testing.T) {
			ck := svHand(t, func(m *model.JEIRT) { fill(m.C1, 3e38); fill(m.W2, 1) })
			up := svUpstreams(t, "http://127.0.0.1:1/v1", "k")
			ts, _ := svServe(t, ck, up)
			for _, c := range []struct{ path, body string }{
				{"/v1/route", `{"text":"` + svQuery + `"}`},
				{"/v1/predict", `{"pairs":[{"model":"big","text":"` + svQuery + `"}]}`},
				{"/v1/chat/completions", `{"model":"router","messages":[{"role":"user","content":"` + svQuery + `"}]}`},
			} {
				code, body := post(t, ts.URL+c.path, c.body)
				if code != 500 || !strings.Contains(body, "tensor c1") || strings.Contains(body, "NaN") {
					t.Errorf("%s: %d %s, want 500 naming c1", c.path, code, body)
				}
			}
			m := get(t, ts.URL+"/metrics")
			for _, route := range []string{"route", "predict", "chat"} {
				if want := fmt.Sprintf(`jeirt_requests_total{code="500",route=%q} 1`, route); !strings.Contains(m, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		}},
		{"a non-finite weight is never written", func(t *testing.T) {
			m := &model.JEIRT{InputDim: 1, Hidden: 1, Dim: 1, W1: []float32{1}, C1: []float32{float32(math.Inf(1))}, W2: []float32{1}, C2: []float32{0},
				M: []float32{1}, Q: []float32{1}, Models: []string{"a"}, Items: []string{"q"}}
			dir := filepath.Join(t.TempDir(), "ck")
			mustFail(t, "write", (&checkpoint.Checkpoint{Model: m}).Write(dir, false), "tensor c1", "non-finite")
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s was written", dir)
			}
		}},

		// A checkpoint that is one thing.
		{"two model names swapped in manifest.json", func(t *testing.T) {
			ck := svHand(t, nil)
			svEditManifest(t, ck, func(m map[string]any) {
				ms := m["models"].([]any)
				ms[0], ms[1] = ms[1], ms[0]
			})
			_, err := checkpoint.Load(ck)
			mustFail(t, "load", err, filepath.Join(ck, "manifest.json"), filepath.Join(ck, "model.safetensors"), "does not match")
			q := writeFile(t, filepath.Join(t.TempDir(), "q.txt"), "hello\n")
			_, _, err = runSplit(t, newRouteCmd(), q, "--checkpoint", ck)
			mustFail(t, "route", err, "does not match")
		}},
		{"item ids reordered in manifest.json", func(t *testing.T) {
			dir := t.TempDir()
			ck := svTrain(t, dir, "ck", 2)
			svEditManifest(t, ck, func(m map[string]any) {
				it := m["items"].([]any)
				it[0], it[1] = it[1], it[0]
			})
			_, err := checkpoint.Load(ck)
			mustFail(t, "load", err, "manifest.json", "model.safetensors", "identity")
		}},
		{"a 2-epoch manifest beside 4-epoch weights", func(t *testing.T) {
			dir := t.TempDir()
			short, long := svTrain(t, dir, "short", 2), svTrain(t, dir, "long", 4)
			svCopy(t, short, long, "manifest.json")
			_, err := checkpoint.Load(long)
			mustFail(t, "load", err, filepath.Join(long, "model.safetensors"), filepath.Join(long, "manifest.json"), "SHA-256")
			out, _, err := runSplit(t, newReportCmd(), "--checkpoint", long, "--out", filepath.Join(dir, "rep"))
			mustFail(t, "report", err, "does not match")
			if _, statErr := os.Stat(filepath.Join(dir, "rep")); statErr == nil || strings.Contains(out, "wrote "+filepath.Join(dir, "rep")) {
				t.Errorf("report wrote a report: %s", out)
			}
		}},
		{"a 2-epoch manifest edited to say 84 epochs", func(t *testing.T) {
			dir := t.TempDir()
			ck := svTrain(t, dir, "ck", 2)
			svEditManifest(t, ck, func(m map[string]any) {
				m["metrics"].(map[string]any)["epochs_run"] = 84
				m["config"].(map[string]any)["train"].(map[string]any)["epochs"] = 84
			})
			_, err := checkpoint.Load(ck)
			mustFail(t, "load", err, "identity", "does not match")
		}},
		{"model.safetensors replaced by another run's", func(t *testing.T) {
			dir := t.TempDir()
			a, b := svTrain(t, dir, "a", 2), svTrain(t, dir, "b", 3)
			svCopy(t, b, a, "model.safetensors")
			_, err := checkpoint.Load(a)
			mustFail(t, "load", err, filepath.Join(a, "model.safetensors"), filepath.Join(a, "manifest.json"), "SHA-256")
		}},
		{"another run's weights with the hash fixed: still the wrong identity", func(t *testing.T) {
			dir := t.TempDir()
			a, b := svTrain(t, dir, "a", 2), svTrain(t, dir, "b", 3)
			svCopy(t, b, a, "model.safetensors")
			svRehash(t, a)
			_, err := checkpoint.Load(a)
			mustFail(t, "load", err, "identity", "does not match")
		}},
		{"metrics.json replaced", func(t *testing.T) {
			dir := t.TempDir()
			ck := svTrain(t, dir, "ck", 2)
			writeFile(t, filepath.Join(ck, "metrics.json"), `{"test":{"accuracy":0.99}}`)
			_, err := checkpoint.Load(ck)
			mustFail(t, "load", err, filepath.Join(ck, "metrics.json"), "SHA-256")
		}},
		{"the weights' hash removed from a version-2 manifest", func(t *testing.T) {
			ck := svHand(t, nil)
			svEditManifest(t, ck, func(m map[string]any) { delete(m, "sha256") })
			_, err := checkpoint.Load(ck)
			mustFail(t, "load", err, filepath.Join(ck, "manifest.json"), "records no hash of model.safetensors")
		}},
		{"a version-1 checkpoint loads with a warning", func(t *testing.T) {
			ck := svHand(t, nil)
			svEditManifest(t, ck, func(m map[string]any) { delete(m, "sha256"); m["format_version"] = 1 })
			svWeightsV1(t, ck)
			q := writeFile(t, filepath.Join(t.TempDir(), "q.txt"), "hello\n")
			out, log, err := runSplit(t, newRouteCmd(), q, "--checkpoint", ck, "--print", "csv")
			if err != nil || !strings.Contains(out, "1,big,0.9000") {
				t.Fatalf("route: %v\n%s", err, out)
			}
			if !strings.Contains(log, "warning: "+ck+" was written by jeirt") || !strings.Contains(log, "before checkpoints recorded hashes") {
				t.Errorf("no warning: %s", log)
			}
		}},
		{"a version-1 manifest saying hash:8 beside a 16-wide adapter: the error names both files", func(t *testing.T) {
			dir := t.TempDir()
			ck := svTrain(t, dir, "ck", 2)
			svEditManifest(t, ck, func(m map[string]any) {
				delete(m, "sha256")
				m["format_version"] = 1
				e := m["encoder"].(map[string]any)
				e["spec"], e["fingerprint"], e["dim"] = "hash:8", "hash/v1/fnv1a64/dim=8", 8
			})
			svWeightsV1(t, ck)
			data := writeFile(t, filepath.Join(dir, "new.csv"), "model,item,correct\nmodel_001,brand-new,1\n")
			items := writeFile(t, filepath.Join(dir, "new_items.csv"), "item_id,text\nbrand-new,a question never seen\n")
			_, _, err := runSplit(t, newEvalCmd(), "--checkpoint", ck, "--data", data, "--items", items)
			mustFail(t, "eval", err, filepath.Join(ck, "manifest.json"), filepath.Join(ck, "model.safetensors"), "length 8", "takes 16")
		}},

		// Degenerate data: under joint maximum likelihood converged false
		// with the reason, for every method; under the default prior the
		// posterior's optimum is certified, and the note says it is the
		// prior's alone.
		{"irt fit on all-correct data: converged false for cbmm, lbfgs and mml under --prior none, the prior's pull named under the default", func(t *testing.T) {
			dir := t.TempDir()
			data := svConstant(t, dir, 8, 6)
			for _, method := range []string{"cbmm", "lbfgs", "mml"} {
				for _, prior := range []string{"none", "default"} {
					out := filepath.Join(dir, method+"-"+prior)
					var log bytes.Buffer
					cmd := newIRTCmd()
					cmd.SetErr(&log)
					if _, err := runCmd(t, cmd, "fit", "--data", data, "--method", method, "--prior", prior, "--out", out); err != nil {
						t.Fatalf("%s: %v", method, err)
					}
					doc := readJSONMap(t, filepath.Join(out, "fit.json"))
					note, _ := doc["convergence_note"].(string)
					want := "no finite optimum and every parameter is where the fit stopped"
					if prior == "default" {
						want = "every estimate is the prior's pull alone"
					}
					if doc["converged"] != (prior == "default") || !strings.Contains(note, "degenerate data") || !strings.Contains(note, want) {
						t.Errorf("%s, prior %s: converged %v, note %q", method, prior, doc["converged"], note)
					}
				}
			}
		}},
		{"irt fit on all-wrong data: converged false under --prior none", func(t *testing.T) {
			data := writeFile(t, filepath.Join(t.TempDir(), "none.csv"), "model,i1,i2,i3\na,0,0,0\nb,0,0,0\nc,0,0,0\n")
			_, doc, _ := svFit(t, data, "--method", "lbfgs", "--prior", "none")
			if doc["converged"] != false || doc["kendall_tau_vs_accuracy"] != nil || doc["kendall_tau_note"] == nil {
				t.Errorf("fit.json: converged %v, tau %v, note %v", doc["converged"], doc["kendall_tau_vs_accuracy"], doc["kendall_tau_note"])
			}
			_, doc, _ = svFit(t, data, "--method", "lbfgs")
			if note, _ := doc["convergence_note"].(string); doc["converged"] != true || !strings.Contains(note, "the prior's pull alone") || doc["kendall_tau_vs_accuracy"] != nil {
				t.Errorf("default prior: converged %v, note %q, tau %v", doc["converged"], note, doc["kendall_tau_vs_accuracy"])
			}
		}},
		{"a model that answered everything right: its θ is named as unbounded", func(t *testing.T) {
			dir := t.TempDir()
			r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 20, Items: 40, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			for j := range r.Items {
				r.Model, r.Item, r.Label = append(r.Model, int32(len(r.Models))), append(r.Item, int32(j)), append(r.Label, 1)
			}
			r.Models = append(r.Models, "oracle")
			data := filepath.Join(dir, "r.csv")
			if err := read.WriteLongCSV(data, r); err != nil {
				t.Fatal(err)
			}
			_, doc, _ := svFit(t, data)
			if note, _ := doc["convergence_note"].(string); !strings.Contains(note, "the θ of 1 model") {
				t.Errorf("convergence_note %q", note)
			}
		}},

		// Sparse models.
		{"a model with 1 answer of 1,140 under --bootstrap 50: not ranked, flagged, no interval", func(t *testing.T) {
			dir := t.TempDir()
			r, _, err := synth.Generate(synth.Options{Kind: "2pl", Models: 25, Items: 1140, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			r.Models = append(r.Models, "lucky")
			r.Model, r.Item, r.Label = append(r.Model, 25), append(r.Item, 0), append(r.Label, 1)
			data := filepath.Join(dir, "r.csv")
			if err := read.WriteLongCSV(data, r); err != nil {
				t.Fatal(err)
			}
			out, _, f := svFit(t, data, "--bootstrap", "50", "--max-iter", "100")
			if !strings.Contains(out, "with fewer than 5 answers (few_answers), not ranked: lucky") {
				t.Errorf("summary: %s", out)
			}
			ab := readCSVFile(t, filepath.Join(f, "abilities.csv"))
			col := map[string]int{}
			for k, h := range ab[0] {
				col[h] = k
			}
			ranks := map[string]bool{}
			for _, row := range ab[1:] {
				if row[0] != "lucky" {
					ranks[row[col["rank"]]] = true
					continue
				}
				if row[col["rank"]] != "" || row[col["rank_lo"]] != "" || row[col["rank_hi"]] != "" || row[col["se"]] != "" ||
					row[col["n_obs"]] != "1" || row[col["flag"]] != "few_answers" {
					t.Errorf("lucky: %v", row)
				}
			}
			if !ranks["1"] || ranks["26"] {
				t.Errorf("the other 25 models should hold ranks 1 to 25: %v", ranks)
			}
		}},
		{"--min-answers 0 ranks every model with an answer", func(t *testing.T) {
			data := writeFile(t, filepath.Join(t.TempDir(), "r.csv"), "model,i1,i2,i3,i4\na,1,0,1,0\nb,1,1,0,0\nc,1,,,\n")
			_, _, f := svFit(t, data, "--min-answers", "0")
			ab := readCSVFile(t, filepath.Join(f, "abilities.csv"))
			for _, row := range ab[1:] {
				if row[5] == "" || row[len(row)-4] != "" { // the flag, before lz_star, infit, outfit
					t.Errorf("row %v: want a rank and no flag", row)
				}
			}
			if _, err := runCmd(t, newIRTCmd(), "fit", "--data", data, "--min-answers", "-1", "--out", filepath.Join(t.TempDir(), "g")); err == nil {
				t.Error("--min-answers -1 accepted")
			}
		}},

		// Undefined statistics: null in JSON, n/a with the reason in print.
		{"split.test 0: no test cells, every score n/a (was accuracy 0 on n 0)", func(t *testing.T) {
			dir := t.TempDir()
			svTrain(t, dir, "warm", 1) // writes the data
			cfg := writeFile(t, filepath.Join(dir, "t0.yaml"), "data: {responses: responses.csv}\nsplit: {val: 0.2, test: 0}\nencoder: {spec: \"hash:16\"}\nmodel: {dim: 4}\ntrain: {epochs: 1}\noutput: t0\n")
			out, log, err := runSplit(t, newTrainCmd(), "--config", cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			if !strings.Contains(out, "jeirt             n/a      n/a") || !strings.Contains(out, "n/a: no cells to score") || strings.Contains(out, "0.0000") {
				t.Errorf("table:\n%s", out)
			}
			met := readJSONMap(t, filepath.Join(dir, "t0", "metrics.json"))
			test := met["test"].(map[string]any)
			if test["accuracy"] != nil || test["auc"] != nil || test["n"] != 0.0 {
				t.Errorf("metrics.json test: %v", test)
			}
		}},
		{"a 1-cell file trains and writes metrics.json with null validation loss", func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "one.csv"), "model,i1\nm1,1\n")
			cfg := writeFile(t, filepath.Join(dir, "one.yaml"), "data: {responses: one.csv}\nencoder: {spec: \"hash:16\"}\nmodel: {dim: 4}\ntrain: {epochs: 2}\noutput: ck\n")
			out, log, err := runSplit(t, newTrainCmd(), "--config", cfg)
			if err != nil {
				t.Fatalf("%v\n%s", err, log)
			}
			if !strings.Contains(log, "val loss n/a acc n/a") || strings.Contains(log+out, "NaN") {
				t.Errorf("log:\n%s\n%s", log, out)
			}
			if !strings.Contains(out, "geometry: Spearman(|q|, item error rate) = n/a over 1 items (n/a: 1 pair(s)") {
				t.Errorf("geometry line:\n%s", out)
			}
			met := readJSONMap(t, filepath.Join(dir, "ck", "metrics.json"))
			h := met["history"].([]any)[0].(map[string]any)
			g := met["geometry"].(map[string]any)
			if h["val_loss"] != nil || h["val_acc"] != nil || g["norm_error_spearman"] != nil || g["norm_error_note"] == nil {
				t.Errorf("metrics.json: history %v, geometry %v", h, g)
			}
		}},
		{"AUC of one class: eval prints n/a with the reason, --json null", func(t *testing.T) {
			ck := svHand(t, nil)
			data := writeFile(t, filepath.Join(t.TempDir(), "r.csv"), "model,item,correct\nbig,known,1\nmid,known,1\nsmall,known,1\n")
			out, _, err := runSplit(t, newEvalCmd(), "--checkpoint", ck, "--data", data)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "jeirt, all cells         1.0000      n/a") || !strings.Contains(out, "n/a: AUC needs both right and wrong answers; the 3 cells hold one kind only") {
				t.Errorf("eval:\n%s", out)
			}
			js, _, err := runSplit(t, newEvalCmd(), "--checkpoint", ck, "--data", data, "--print", "json")
			if err != nil {
				t.Fatal(err)
			}
			var ev map[string]map[string]any
			json.Unmarshal([]byte(js), &ev)
			if v, ok := ev["metrics"]["auc"]; !ok || v != nil {
				t.Errorf("--json auc %v", v)
			}
		}},
		{"Kendall τ of a constant ranking: null in fit.json, n/a with the reason", func(t *testing.T) {
			data := writeFile(t, filepath.Join(t.TempDir(), "r.csv"), "model,i1,i2,i3,i4,i5,i6\na,1,0,1,0,1,0\nb,1,0,1,0,1,0\nc,1,0,1,0,1,0\n")
			out, doc, _ := svFit(t, data)
			if !strings.Contains(out, "Kendall τ(θ, accuracy) = n/a (") || strings.Contains(out, "NaN") {
				t.Errorf("summary: %s", out)
			}
			if doc["kendall_tau_vs_accuracy"] != nil || !strings.Contains(fmt.Sprint(doc["kendall_tau_note"]), "the same for all 3") {
				t.Errorf("fit.json tau %v, note %v", doc["kendall_tau_vs_accuracy"], doc["kendall_tau_note"])
			}
		}},
		{"irt cv --json of one-class folds writes null, not a JSON error", func(t *testing.T) {
			data := svConstant(t, t.TempDir(), 6, 8)
			out, err := runCmd(t, newIRTCmd(), "cv", "--data", data, "--folds", "2", "--print", "json")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, `"auc": null`) {
				t.Errorf("cv --json:\n%s", out)
			}
		}},

		// Secrets never leave serve.
		{"an upstream echoing the key in its error body: masked in the 502 and the log", func(t *testing.T) {
			up := echoingUpstream(t, false)
			ts, log := svServe(t, svHand(t, nil), svUpstreams(t, up.URL+"/v1", svKey))
			code, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
			if code != 502 || !strings.Contains(body, "401 Unauthorized") || !strings.Contains(body, "Incorrect API key provided: Bearer ***") {
				t.Errorf("502: %d %s", code, body)
			}
			for what, s := range map[string]string{"body": body, "log": log.String()} {
				if strings.Contains(s, svKey) || strings.Contains(s, "AbC123dEf") {
					t.Errorf("the key leaked in the %s: %s", what, s)
				}
			}
		}},
		{"an upstream echoing the key in a header: masked", func(t *testing.T) {
			up := echoingUpstream(t, true)
			ts, _ := svServe(t, svHand(t, nil), svUpstreams(t, up.URL+"/v1", svKey))
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"big","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if id := resp.Header.Get("X-Request-Id"); resp.StatusCode != 200 || strings.Contains(id, "AbC123dEf") || !strings.Contains(id, "***") {
				t.Errorf("%d, X-Request-Id %q", resp.StatusCode, id)
			}
		}},
		{"a key unlike any known shape is masked because it is the configured one", func(t *testing.T) {
			up := echoingUpstream(t, false)
			ts, _ := svServe(t, svHand(t, nil), svUpstreams(t, up.URL+"/v1", "plainpassword"))
			_, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
			if strings.Contains(body, "plainpassword") {
				t.Errorf("leaked: %s", body)
			}
		}},
		{"a password in base_url: masked in the 502, the log and /v1/jeirt/models", func(t *testing.T) {
			ts, log := svServe(t, svHand(t, nil), svUpstreams(t, "http://alice:s3cr3t-Pa55@127.0.0.1:1/v1", "k"))
			code, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
			models := get(t, ts.URL+"/v1/jeirt/models")
			list := get(t, ts.URL+"/v1/models")
			if code != 502 || !strings.Contains(body, "alice:***@127.0.0.1:1") || !strings.Contains(models, "alice:***@127.0.0.1:1") {
				t.Errorf("502 %d %s; models %s", code, body, models)
			}
			for what, s := range map[string]string{"body": body, "log": log.String(), "models": models, "OpenAI list": list} {
				if strings.Contains(s, "s3cr3t") {
					t.Errorf("the password leaked in the %s: %s", what, s)
				}
			}
		}},
		{"a key in base_url's query: masked", func(t *testing.T) {
			ts, log := svServe(t, svHand(t, nil), svUpstreams(t, "http://127.0.0.1:1/v1?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "k"))
			_, body := post(t, ts.URL+"/v1/chat/completions", `{"model":"big","messages":[{"role":"user","content":"hi"}]}`)
			models := get(t, ts.URL+"/v1/jeirt/models")
			list := get(t, ts.URL+"/v1/models")
			for what, s := range map[string]string{"body": body, "log": log.String(), "models": models, "OpenAI list": list} {
				if strings.Contains(s, "9tSrke72") {
					t.Errorf("the key leaked in the %s: %s", what, s)
				}
			}
		}},
		{"a bad base_url with a password: the upstreams file error masks it", func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "up.yaml"), "- name: big\n  base_url: ftp://bob:hunter2pass@example.com/v1\n")
			_, err := serve.ReadUpstreams(p)
			mustFail(t, "read", err, p, "bob:***@example.com")
			if strings.Contains(err.Error(), "hunter2pass") {
				t.Errorf("leaked: %v", err)
			}
		}},

		// The baselines: a kill during them keeps the training.
		{"Ctrl-C during the baselines keeps the trained checkpoint", func(t *testing.T) {
			dir := t.TempDir()
			svTrain(t, dir, "warm", 1)
			cfg, err := pipeline.LoadConfig(writeFile(t, filepath.Join(dir, "b.yaml"),
				"data: {responses: responses.csv, items: items.csv}\nencoder: {spec: \"hash:16\"}\nmodel: {dim: 4}\ntrain: {epochs: 2}\noutput: ck\n"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var lines []string
			res, err := pipeline.Run(ctx, cfg, pipeline.Options{Log: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				line := fmt.Sprintf(format, args...)
				lines = append(lines, line)
				if strings.Contains(line, "running the baselines") {
					cancel() // as Ctrl-C would, once the model is trained
				}
			}})
			if err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
			}
			ck, err := checkpoint.Load(filepath.Join(dir, "ck"))
			if err != nil {
				t.Fatal(err)
			}
			met, err := checkpoint.ReadRunMetrics(ck.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(met.Baselines) != 0 || !strings.Contains(strings.Join(met.Warnings, ";"), "baselines did not finish") || res.Metrics.EpochsRun != 2 {
				t.Errorf("metrics: baselines %v, warnings %v", met.Baselines, met.Warnings)
			}
			if !strings.Contains(strings.Join(lines, "\n"), "keeps the trained model") {
				t.Errorf("log:\n%s", strings.Join(lines, "\n"))
			}
		}},
	}
	if len(cases) < 20 {
		t.Fatalf("the corpus holds %d cases, want at least 20", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// svWeightsV1 makes the weights of checkpoint ck record format version 1,
// as a version-1 folder's do (a version-2 manifest set back to 1 beside
// weights that record 2 is refused as a downgrade).
func svWeightsV1(t *testing.T, ck string) {
	t.Helper()
	p := filepath.Join(ck, "model.safetensors")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v1 := bytes.Replace(b, []byte(`"format_version":"2"`), []byte(`"format_version":"1"`), 1)
	if bytes.Equal(v1, b) {
		t.Fatal("the weights record no format_version 2")
	}
	if err := os.WriteFile(p, v1, 0o644); err != nil {
		t.Fatal(err)
	}
}
