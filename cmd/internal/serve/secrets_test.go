package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jeirt/jeirt/model/progress"
)

// leakCase is one secret configured for the upstream "big" (in its
// base_url, or as its key) and one way the upstream, or Go, may repeat it.
type leakCase struct {
	name string
	// base is the upstream's base_url; UP stands for the echoing
	// upstream's address, DEAD for one where nothing listens.
	base string
	// key is the value of big's api_key_env ("": none).
	key string
	// echo answers the chat (nil: the upstream at DEAD is never reached).
	echo func(w http.ResponseWriter, r *http.Request)
	// secrets are what must never be seen (in any encoding); status the
	// wanted status of the chat not streamed.
	secrets []string
	status  int
}

// creds is everything a request carries that an echo may repeat: the
// Authorization header, the query, the user info.
func creds(r *http.Request) string {
	return r.Header.Get("Authorization") + " " + r.URL.RawQuery + " " + r.URL.Query().Encode()
}

// echoWith answers status with body(r), as JSON.
func echoWith(status int, body func(r *http.Request) string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body(r))
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func slashEscaped(s string) string {
	return strings.ReplaceAll(strings.Trim(jsonString(s), `"`), "/", `\/`)
}

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func chatJSON(content string) string {
	return `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":` + jsonString(content) + `},"finish_reason":"stop"}]}`
}

// leakCorpus is every form of a configured secret the service was seen to
// leak, or could: keys in base_url's query under each common name, user
// info, a dead upstream (Go's error text), and upstreams echoing the
// request's credentials raw, URL-, JSON- (with \/), HTML- and base64-encoded,
// in error bodies and in successful answers, streamed or not, in headers and
// after a redirect.
func leakCorpus() []leakCase {
	const (
		key   = "sk-live-Zq8/Wx+3vT9=pL2kR7mN"
		plain = "correcthorsebatterystaple" // no digit, no known prefix
		pass  = "p@ss/w0rd:Z9"
		s     = "S3cr3tQ-9f8e7d6c5b4a"
		// pathKey is an account key of no known prefix, as a gateway takes
		// it in the path.
		pathKey = "kq7Zx2Lm9Pw4Rt8Yv3Bn"
	)
	dead := func(q string) leakCase {
		return leakCase{name: "dead upstream, " + q, base: "DEAD/v1?" + q + "=" + s, secrets: []string{s}, status: 502}
	}
	c := []leakCase{
		dead("key"), dead("token"), dead("api_key"), dead("api-key"), dead("subscription-key"), dead("sig"),
		dead("X-Amz-Signature"), dead("access_token"), dead("code"), dead("X-Goog-Signature"), dead("apikey"),
		{name: "dead upstream, a key as the URL's user", base: "http://" + s + "@DEADHOST/v1", secrets: []string{s}, status: 502},
		{name: "dead upstream, user:password", base: "http://alice:" + s + "@DEADHOST/v1", secrets: []string{s}, status: 502},
		{name: "dead upstream, an escaped password", base: "http://alice:" + url.PathEscape(pass) + "@DEADHOST/v1", secrets: []string{pass}, status: 502},
		{name: "dead upstream, a key with / and + in the query", base: "DEAD/v1?key=" + url.QueryEscape(key), secrets: []string{key}, status: 502},
		{name: "dead upstream, a bearer key", base: "DEAD/v1", key: key, secrets: []string{key}, status: 502},

		{name: "401 echoing Authorization", base: "UP/v1", key: key, secrets: []string{key}, status: 502,
			echo: echoWith(401, func(r *http.Request) string {
				return `{"error":{"message":"Incorrect API key provided: ` + r.Header.Get("Authorization") + `"}}`
			})},
		{name: "401 echoing a key of no known shape", base: "UP/v1", key: plain, secrets: []string{plain}, status: 502,
			echo: echoWith(401, func(r *http.Request) string { return `{"error":{"message":"bad key ` + bearer(r) + `"}}` })},
		{name: "401 echoing the key JSON-escaped with \\/", base: "UP/v1", key: key, secrets: []string{key}, status: 502,
			echo: echoWith(401, func(r *http.Request) string { return `{"error":{"message":"bad key ` + slashEscaped(bearer(r)) + `"}}` })},
		{name: "401 echoing the decoded base_url password", base: "http://bob:" + url.PathEscape(pass) + "@UPHOST/v1", secrets: []string{pass}, status: 502,
			echo: echoWith(401, func(r *http.Request) string {
				_, p, _ := r.BasicAuth()
				return `{"error":{"message":"wrong password ` + p + ` for bob"}}`
			})},
		{name: "401 echoing the base64 Basic header", base: "http://bob:" + s + "@UPHOST/v1", secrets: []string{s, "bob:" + s}, status: 502,
			echo: echoWith(401, func(r *http.Request) string {
				return `{"error":{"message":"got ` + r.Header.Get("Authorization") + `"}}`
			})},
		{name: "403 echoing the key base64-encoded", base: "UP/v1", key: plain, secrets: []string{plain}, status: 502,
			echo: echoWith(403, func(r *http.Request) string {
				return `{"error":"denied ` + base64.StdEncoding.EncodeToString([]byte(r.Header.Get("Authorization"))) + `"}`
			})},
		{name: "400 echoing the query key URL-escaped", base: "UP/v1?api-key=" + url.QueryEscape(key), secrets: []string{key}, status: 400,
			echo: echoWith(400, func(r *http.Request) string { return `{"error":"bad request for ?` + r.URL.RawQuery + `"}` })},
		{name: "400 echoing the key in its error object's param and code", base: "UP/v1", key: plain, secrets: []string{plain}, status: 400,
			echo: echoWith(400, func(r *http.Request) string {
				return `{"error":{"message":"bad","type":"invalid_request_error","param":"` + bearer(r) + `","code":"` + bearer(r) + `"}}`
			})},
		{name: "429 echoing the key in Retry-After and its type", base: "UP/v1?key=" + s, secrets: []string{s}, status: 429,
			echo: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", r.URL.Query().Get("key"))
				w.WriteHeader(429)
				fmt.Fprintf(w, `{"error":{"message":"slow down","type":"%s"}}`, r.URL.Query().Get("key"))
			}},
		{name: "500 text echoing the subscription key", base: "UP/v1?subscription-key=" + s, secrets: []string{s}, status: 502,
			echo: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "internal error handling "+r.URL.String(), 500)
			}},
		{name: "HTML 200 echoing the key", base: "UP/v1", key: plain, secrets: []string{plain}, status: 502,
			echo: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html><body>Signed in with "+bearer(r)+"</body></html>")
			}},
		{name: "200 echoing Authorization in the answer", base: "UP/v1", key: key, secrets: []string{key}, status: 200,
			echo: echoWith(200, func(r *http.Request) string { return chatJSON("your header was " + r.Header.Get("Authorization")) })},
		{name: "200 echoing a plain key JSON-escaped", base: "UP/v1", key: plain, secrets: []string{plain}, status: 200,
			echo: echoWith(200, func(r *http.Request) string { return chatJSON("key " + bearer(r)) })},
		{name: "200 echoing a key whose variable ends in white space", base: "UP/v1", key: plain + " \t", secrets: []string{plain}, status: 200,
			echo: echoWith(200, func(r *http.Request) string { return chatJSON("key " + bearer(r)) })},
		{name: "200 echoing the key as .NET writes JSON (+ as \\u002B)", base: "UP/v1", key: key, secrets: []string{key}, status: 200,
			echo: echoWith(200, func(r *http.Request) string {
				return `{"choices":[{"message":{"role":"assistant","content":"key ` + strings.ReplaceAll(bearer(r), "+", `\u002B`) + `"},"finish_reason":"stop"}]}`
			})},
		{name: "200 echoing the key with \\/", base: "UP/v1", key: key, secrets: []string{key}, status: 200,
			echo: echoWith(200, func(r *http.Request) string {
				return `{"choices":[{"message":{"role":"assistant","content":"key ` + slashEscaped(bearer(r)) + `"},"finish_reason":"stop"}]}`
			})},
		{name: "200 echoing the query key", base: "UP/v1?key=" + s, secrets: []string{s}, status: 200,
			echo: echoWith(200, func(r *http.Request) string { return chatJSON("you called " + r.URL.String()) })},
		{name: "200 echoing the user info password", base: "http://bob:" + s + "@UPHOST/v1", secrets: []string{s}, status: 200,
			echo: echoWith(200, func(r *http.Request) string {
				u, p, _ := r.BasicAuth()
				return chatJSON("basic " + u + ":" + p + " = " + r.Header.Get("Authorization"))
			})},
		{name: "200 echoing the key in a header", base: "UP/v1", key: key, secrets: []string{key}, status: 200,
			echo: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", "req-"+r.Header.Get("Authorization"))
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, chatJSON("hi"))
			}},
		{name: "same-host redirect to an echo", base: "UP/v1", key: key, secrets: []string{key}, status: 502,
			echo: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/echo") {
					echoWith(200, func(r *http.Request) string { return chatJSON(creds(r)) })(w, r)
					return
				}
				http.Redirect(w, r, "/echo?from="+url.QueryEscape(creds(r)), http.StatusTemporaryRedirect)
			}},
		{name: "redirect carrying the query key", base: "UP/v1?key=" + s, secrets: []string{s}, status: 502,
			echo: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/elsewhere?"+r.URL.RawQuery, http.StatusFound)
			}},
		{name: "stream echoing the key", base: "UP/v1", key: key, secrets: []string{key}, status: 200,
			echo: func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.URL.Path, "chat") {
					fmt.Fprint(w, `{"data":[]}`)
					return
				}
				var req struct{ Stream bool }
				json.NewDecoder(r.Body).Decode(&req)
				if !req.Stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, chatJSON(bearer(r)))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", jsonString("your key: "+bearer(r)))
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", slashEscaped(bearer(r)))
			}},
		// A key in a path segment of base_url: in /v1/jeirt/models,
		// /v1/route, the 502 of a dead upstream (Go's error names the
		// endpoint) and the log.
		{name: "dead upstream, a key as a path segment", base: "DEAD/" + pathKey + "/v1", secrets: []string{pathKey}, status: 502},
		{name: "dead upstream, a plain key after /key/", base: "DEAD/key/" + plain + "/v1", secrets: []string{plain}, status: 502},
		{name: "401 echoing the path key", base: "UP/" + pathKey + "/v1", secrets: []string{pathKey}, status: 502,
			echo: echoWith(401, func(r *http.Request) string { return `{"error":{"message":"no such account in ` + r.URL.Path + `"}}` })},
		{name: "200 echoing the path key", base: "UP/gateway/" + pathKey + "/v1", secrets: []string{pathKey}, status: 200,
			echo: echoWith(200, func(r *http.Request) string { return chatJSON("you called " + r.URL.Path) })},
		// A key split across two data: lines of one event: each line alone
		// holds no secret, the client joins them.
		{name: "stream echoing the key split across two lines of one event", base: "UP/v1", key: plain, secrets: []string{plain}, status: 200,
			echo: func(w http.ResponseWriter, r *http.Request) {
				var req struct{ Stream bool }
				json.NewDecoder(r.Body).Decode(&req)
				if !req.Stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, chatJSON("hi"))
					return
				}
				k := bearer(r)
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"your key: %s\ndata: %s\"}}]}\n\n", k[:9], k[9:])
				fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			}},
		{name: "a stream cut off after echoing the key", base: "UP/v1?token=" + s, secrets: []string{s}, status: 200,
			echo: func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.URL.Path, "chat") {
					w.WriteHeader(404)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", jsonString(r.URL.String()))
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				panic(http.ErrAbortHandler) // the connection breaks
			}},
	}
	return c
}

// forms are the encodings a leak of secret would show in.
func forms(secret string) []string {
	out := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.Trim(jsonString(secret), `"`), slashEscaped(secret)}
	out = append(out, strings.ReplaceAll(secret, "+", `\u002B`))
	b := base64.StdEncoding.EncodeToString([]byte(secret))
	out = append(out, b[:4*(len(secret)/3)])
	return out
}

// TestNoSecretLeaves runs the corpus: for each case a server is started
// with the case's upstream, every route that says something of the
// upstreams is asked (a chat not streamed and streamed, /v1/jeirt/models,
// /v1/models, /metrics, a wrong method, the start-up probe), and no byte a
// client or the log receives, headers included, may hold a configured
// secret in any encoding.
func TestNoSecretLeaves(t *testing.T) {
	corpus := leakCorpus()
	if len(corpus) < 30 {
		t.Fatalf("the corpus has %d cases, want at least 30", len(corpus))
	}
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			base := strings.NewReplacer("DEADHOST", "127.0.0.1:1", "DEAD", "http://127.0.0.1:1").Replace(c.base)
			if c.echo != nil {
				ts := httptest.NewServer(http.HandlerFunc(c.echo))
				t.Cleanup(ts.Close)
				base = strings.NewReplacer("UPHOST", strings.TrimPrefix(ts.URL, "http://"), "UP", ts.URL).Replace(base)
			}
			up := filepath.Join(t.TempDir(), "up.yaml")
			text := fmt.Sprintf("- {name: big, base_url: %s}\n", jsonString(base))
			if c.key != "" {
				t.Setenv("LEAK_TEST_KEY", c.key)
				text = fmt.Sprintf("- {name: big, base_url: %s, api_key_env: LEAK_TEST_KEY}\n", jsonString(base))
			}
			os.WriteFile(up, []byte(text), 0o644)
			var log syncLog
			f := newFixture(t, Settings{Upstreams: up, Log: progress.LogTo(&log), UpstreamTimeout: 5 * time.Second})
			f.srv.probeUpstreams(context.Background(), 2*time.Second)

			var seen strings.Builder
			ask := func(method, path, body string) int {
				req, _ := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
				resp, err := f.ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				resp.Header.Write(&seen)
				seen.Write(b)
				return resp.StatusCode
			}
			chat := `{"model":"big","messages":[{"role":"user","content":"hi"}]}`
			if code := ask("POST", "/v1/chat/completions", chat); code != c.status {
				t.Errorf("chat: %d, want %d:\n%s", code, c.status, seen.String())
			}
			ask("POST", "/v1/chat/completions", `{"model":"big","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			ask("POST", "/v1/chat/completions", `{"model":"router","messages":[{"role":"user","content":"hi"}]}`)
			ask("GET", "/v1/jeirt/models", "")
			ask("POST", "/v1/route", `{"text":"hi","models":["big"]}`)
			ask("GET", "/v1/models", "")
			ask("GET", "/v1/chat/completions", "")
			ask("GET", "/metrics", "")
			if reached := c.echo != nil || c.key == ""; reached && !strings.Contains(seen.String()+log.String(), "***") {
				t.Errorf("nothing was masked: the case does not reach its secret\n%s\n%s", seen.String(), log.String())
			}
			// A client joins the data: lines of an event into one text.
			joined := strings.NewReplacer("\ndata: ", "", "\ndata:", "").Replace(seen.String())
			for _, secret := range c.secrets {
				for _, form := range forms(secret) {
					for what, s := range map[string]string{"answers": seen.String(), "answers as a client joins an event's data lines": joined, "log": log.String()} {
						if k := strings.Index(s, form); k >= 0 {
							t.Errorf("%q (a form of %q) is in the %s: …%s…", form, secret, what, s[max(0, k-120):min(len(s), k+len(form)+40)])
						}
					}
				}
			}
		})
	}
}

// A base_url that does not parse: the error does not show its password.
func TestUpstreamsFileErrorsMaskSecrets(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, secret, want string }{
		{"- name: a\n  base_url: \"http://bob:hunter2-X9%zz@h/v1\"\n", "hunter2-X9", `base_url "http://bob:***@h/v1" is not an http(s) URL`},
		{"- name: a\n  base_url: \"http://TOKEN-abc123 x@h/v1\"\n", "TOKEN-abc123", `base_url "http://***@h/v1" is not an http(s) URL`},
		{"- name: a\n  base_url: \"ftp://h/v1?key=K3y-abcdef\"\n", "K3y-abcdef", `base_url "ftp://h/v1?key=***" is not an http(s) URL`},
		{"- name: a\n  base_url: [\"http://bob:pw-77x@h/v1\"]\n", "pw-77x", "want a list of upstreams"},
	} {
		p := filepath.Join(dir, "u.yaml")
		os.WriteFile(p, []byte(c.text), 0o644)
		_, err := ReadUpstreams(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.secret) {
			t.Errorf("%q: %v, want %q and not %q", c.text, err, c.want, c.secret)
		}
		if _, err := New(Settings{Checkpoint: filepath.Join(dir, "none"), Upstreams: p}); err == nil || strings.Contains(err.Error(), c.secret) {
			t.Errorf("New with %q: %v", c.text, err)
		}
	}
}

// Redirects of the start-up probe (a GET) to another host are followed
// without the key.
func TestRedirectToAnotherHostDropsTheKey(t *testing.T) {
	got := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		fmt.Fprint(w, `{"data":[]}`)
	}))
	t.Cleanup(other.Close)
	first := chatUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/v1/models", http.StatusFound)
	})
	t.Setenv("REDIRECT_KEY", "sk-redirect-0123456789")
	up := filepath.Join(t.TempDir(), "up.yaml")
	os.WriteFile(up, []byte("- {name: big, base_url: "+first+", api_key_env: REDIRECT_KEY}\n"), 0o644)
	f := newFixture(t, Settings{Upstreams: up})
	if w := f.srv.probeUpstreams(context.Background(), 2*time.Second); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	if auth := <-got; auth != "" {
		t.Errorf("the other host got Authorization %q", auth)
	}
}
