package serve

import (
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/route"
)

// withRouting writes the hand checkpoint big/mid/small (P 0.9/0.75/0.6 on
// every question) with a recorded default rule, and serves it.
func withRouting(t *testing.T, rt *checkpoint.Routing) *fixture {
	t.Helper()
	up := allUpstreams(t)
	f := newFixture(t, Settings{Upstreams: up})
	ck, err := checkpoint.Load(f.ck)
	if err != nil {
		t.Fatal(err)
	}
	ck.Manifest.Routing = rt
	dir := filepath.Join(f.dir, "routed")
	if err := ck.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	srv, err := New(Settings{Checkpoint: dir, Upstreams: up, Log: progress.LogTo(&log)})
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.ck = srv, dir
	f.ts.Config.Handler = srv.Handler()
	rule, err := route.Recorded(rt)
	if err != nil {
		t.Fatal(err)
	}
	if want := `serve: "router" applies the checkpoint's default rule ` + rule.String() + ": " + rt.Why; !strings.Contains(log.String(), want) {
		t.Errorf("start-up log lacks %q:\n%s", want, log.String())
	}
	return f
}

// Plain "router" (no rule) is the checkpoint's recorded default, ranked by
// its recorded training accuracies; /v1/router says which rule and why.
func TestDefaultRule(t *testing.T) {
	two := 2.0
	acc := map[string]float64{"big": 0.1, "mid": 0.8, "small": 0.9}
	f := withRouting(t, &checkpoint.Routing{Rule: "shortlist", Param: &two, Why: "the highest accuracy in 5-fold cross-validation", Fallback: "small", TrainAccuracy: acc,
		OutOfDomain: &checkpoint.OutOfDomain{FalseFlagRate: 0.05, Threshold: 0.5, Calibration: 40, Reference: 40}})
	// The shortlist of two by training accuracy is small and mid; mid has the higher P.
	for _, body := range []string{`{"text":"q"}`, `{"text":"q","rule":"default"}`} {
		code, out, _ := f.do(t, "POST", "/v1/route", body)
		got := decode[Routed](t, out)
		if code != http.StatusOK || got.Model != "mid" || math.Abs(got.P-0.75) > 1e-6 {
			t.Errorf("%s: %d %s", body, code, out)
		}
	}
	// A chat with "router" applies it too; router:<rule> names another.
	for _, c := range []struct{ name, model string }{{"router", "mid"}, {"router:best-single", "small"}, {"router:max-p", "big"}, {"router:shortlist?k=1", "small"}} {
		code, body, h := f.do(t, "POST", "/v1/chat/completions", `{"model":"`+c.name+`","messages":[{"role":"user","content":"hi"}]}`)
		if code != 200 || h.Get("X-Jeirt-Model") != c.model {
			t.Errorf("chat %s: %d %s, model %q, want %s", c.name, code, body, h.Get("X-Jeirt-Model"), c.model)
		}
	}
	// A rule named in the request still applies.
	if _, out, _ := f.do(t, "POST", "/v1/route", `{"text":"q","rule":"max-p"}`); decode[Routed](t, out).Model != "big" {
		t.Errorf("max-p: %s", out)
	}
	code, out, _ := f.do(t, "GET", "/v1/router", "")
	info := decode[RouterInfo](t, out)
	if code != http.StatusOK || info.Rule != "shortlist?k=2" || !info.Recorded || info.Fallback != "small" || info.OutOfDomain.FalseFlagRate != 0.05 ||
		!strings.Contains(out, `"why":"the highest accuracy in 5-fold cross-validation"`) {
		t.Errorf("/v1/router: %d %s", code, out)
	}
	f = withRouting(t, &checkpoint.Routing{Rule: "best-single", Why: "no rule beat it", Fallback: "small", TrainAccuracy: acc})
	if _, out, _ := f.do(t, "POST", "/v1/route", `{"text":"q"}`); decode[Routed](t, out).Model != "small" {
		t.Errorf("best-single: %s", out)
	}
}

// A checkpoint without a recorded rule keeps the old default (max-p), and
// /v1/router says it records none.
func TestDefaultRuleUnrecorded(t *testing.T) {
	f := newFixture(t, Settings{})
	if _, out, _ := f.do(t, "POST", "/v1/route", `{"text":"q"}`); decode[Routed](t, out).Model != "big" {
		t.Errorf("no recorded rule: %s", out)
	}
	code, out, _ := f.do(t, "GET", "/v1/router", "")
	if info := decode[RouterInfo](t, out); code != http.StatusOK || info.Recorded || info.Rule != "max-p" {
		t.Errorf("/v1/router: %d %s", code, out)
	}
	if code, out, _ := f.do(t, "POST", "/v1/route", `{"text":"q","rule":"default"}`); code != http.StatusBadRequest || !strings.Contains(out, "records no default rule") {
		t.Errorf("rule default without one: %d %s", code, out)
	}
}
