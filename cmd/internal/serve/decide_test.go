package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// POST /v1/route makes the decision a chat with the same rule and text
// makes, among the models that have an upstream (here mid and small: big,
// the highest P, has none), reports the rule that chose as its spec and
// names the upstream the chat goes to.
func TestRoutePreviewIsTheChat(t *testing.T) {
	up, _ := fakeUpstream(t, "all", nil)
	t.Setenv("KEY_ALL", "key-all")
	file := filepath.Join(t.TempDir(), "up.yaml")
	var b strings.Builder
	for _, n := range []string{"mid", "small"} {
		fmt.Fprintf(&b, "- {name: %s, base_url: %s/v1, api_key_env: KEY_ALL, model: vendor/%s}\n", n, up.URL, n)
	}
	os.WriteFile(file, []byte(b.String()), 0o644)
	f := newFixture(t, Settings{Costs: "-", Upstreams: file})
	// P: big 0.9, mid 0.75, small 0.6; costs 10, 3, 1; ranked big, mid, small.
	for _, c := range []struct{ spec, model, rule, why string }{
		{"max-p", "mid", "max-p", "highest P of the 2 candidates"},
		{"best-single", "mid", "best-single", "best-ranked"},
		{"shortlist?k=1", "mid", "shortlist?k=1", "1 best-ranked"},
		{"shortlist", "mid", "shortlist?k=3", "2 best-ranked"},
		{"margin?delta=0.1&default=small", "mid", "margin?delta=0.1&default=small", "mid's P beats the default model small's by 0.1500"},
		{"margin?delta=0.2&default=small", "small", "margin?delta=0.2&default=small", "kept the default model small"},
		{"margin?delta=0.2", "mid", "margin?delta=0.2&default=mid", "has the highest P"},
		{"min-p", "mid", "min-p?p=0.7", "cheapest"},
		{"min-p?p=0.5", "small", "min-p?p=0.5", "cheapest"},
		{"min-p?p=0.8", "mid", "min-p?p=0.8", "no candidate reached"},
		{"lambda?lambda=1", "small", "lambda?lambda=1", "P - 1 x cost"},
		{"max-p?k=1", "mid", "shortlist?k=1", "1 best-ranked"},
		{"margin?delta=0", "mid", "margin?delta=0&default=mid", "has the highest P"},
		{"lambda?lambda=0", "mid", "lambda?lambda=0", "P - 0 x cost"},
	} {
		code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"what is 2+2?","rule":"`+c.spec+`"}`)
		r := decode[Routed](t, body)
		if code != 200 || r.Model != c.model || r.Rule != c.rule || !strings.Contains(r.Reason, c.why) ||
			r.Upstream != up.URL+"/v1" || r.UpstreamModel != "vendor/"+c.model {
			t.Errorf("/v1/route %s: %d %s; want %s by %s because ...%s...", c.spec, code, body, c.model, c.rule, c.why)
		}
		code, body, h := f.do(t, "POST", "/v1/chat/completions", `{"model":"router:`+c.spec+`","messages":[{"role":"user","content":"what is 2+2?"}]}`)
		if code != 200 || h.Get("X-Jeirt-Model") != r.Model || h.Get("X-Jeirt-Rule") != r.Rule || !strings.Contains(body, `"model":"vendor/`+r.Model+`"`) {
			t.Errorf("chat router:%s: %d %s, model %q by %q; /v1/route said %s by %s", c.spec, code, body, h.Get("X-Jeirt-Model"), h.Get("X-Jeirt-Rule"), r.Model, r.Rule)
		}
	}
	// Naming a model without an upstream is refused by both.
	if code, body, _ := f.do(t, "POST", "/v1/route", `{"text":"q","rule":"max-p","models":["big","mid"]}`); code != 400 || !strings.Contains(body, `model \"big\" has no upstream`) {
		t.Errorf("/v1/route to big: %d %s", code, body)
	}
}
