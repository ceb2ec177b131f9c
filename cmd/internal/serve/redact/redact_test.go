package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	const key = "Zq8/Wx+3vT9=pL2k"
	m := New(key, "bob:hunter2", "hunter2", "naïve-secret-ü", "tok&en<9>")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct{ in, want string }{
		// The configured secrets, in each encoding.
		{"key " + key + " end", "key *** end"},
		{"q=" + url.QueryEscape(key), "q=***"},
		{"q=Zq8%2fWx%2b3vT9%3dpL2k", "q=***"},
		{`{"k":"Zq8\/Wx+3vT9=pL2k"}`, `{"k":"***"}`},
		{`"naïve-secret-ü"`, `"***"`},
		{`"na\u00efve-secret-\u00fc"`, `"***"`},
		{"<p>tok&amp;en&lt;9&gt;</p>", "<p>***</p>"},
		{"Basic " + b64("bob:hunter2"), "Basic ***"},
		{"echo " + b64("Bearer "+key), "echo QmVhcmVyIF***Mms="}, // the key's bytes at another alignment: what depends on them alone
		// URL user info and key parameters of URLs not configured.
		{`Post "http://amy:pw-1@h:1/v1?x=1&api-key=abc/def&sig=Z9%2B": refused`, `Post "http://amy:***@h:1/v1?x=1&api-key=***&sig=***": refused`},
		{"see (http://h/v1?key=abcd) now", "see (http://h/v1?key=***) now"},
		{"http://TOKEN123@host/v1", "http://***@host/v1"},
		{`{"url":"https:\/\/h\/v1?a=1\u0026token=abcd"}`, `{"url":"https:\/\/h\/v1?a=1\u0026token=***"}`},
		// Shapes of keys; words stay words.
		{"Incorrect API key provided: Bearer sk-proj-abc123", "Incorrect API key provided: Bearer ***"},
		{"missing or wrong bearer token (Authorization: Bearer ...)", "missing or wrong bearer token (Authorization: Bearer ...)"},
		{`"password": "letmein"`, `"password": "***"`},
		{"AKIAIOSFODNN7EXAMPLE", "***"},
	}
	for _, c := range cases {
		if got := m.Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Exact leaves a model's words alone and masks only the secrets.
	if got := m.Exact("Use Bearer tokens; sk-abc123456 is an example, " + key + " is not"); got != "Use Bearer tokens; sk-abc123456 is an example, *** is not" {
		t.Errorf("Exact: %q", got)
	}
}

func TestURL(t *testing.T) {
	m := New("zz-S3cret-99")
	for in, want := range map[string]string{
		"https://u:pw@h/v1":                        "https://u:***@h/v1",
		"https://KEY9876@h/v1":                     "https://***@h/v1",
		"https://h/v1?key=abc&model=x":             "https://h/v1?key=***&model=x",
		"https://h/v1?X-Amz-Signature=abc":         "https://h/v1?X-Amz-Signature=***",
		"https://h/v1?subscription-key=abc":        "https://h/v1?subscription-key=***",
		"http://bob:hunter2-X9%zz@h/v1":            "http://bob:***@h/v1", // does not parse
		"https://h/v1?deployment=zz-S3cret-99-eu1": "https://h/v1?deployment=***-eu1",
	} {
		if got := m.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	got := URLSecrets("http://bob:p%40ss@h/v1?api-key=a%2Fb&model=m")
	want := []string{"p@ss", "bob:p@ss", "p%40ss", "a%2Fb", "a/b"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("URLSecrets: %q, want %q", got, want)
	}
	if got := URLSecrets("http://TOKEN@h/v1"); strings.Join(got, " ") != "TOKEN TOKEN: TOKEN" {
		t.Errorf("URLSecrets of a user alone: %q", got)
	}
	if s := New("abc").Short(); len(s) != 1 {
		t.Errorf("Short: %q", s)
	}
}

// FuzzMask: a configured secret, wherever it stands in text and in
// whichever encoding, is never in what Mask or Exact returns.
func FuzzMask(f *testing.F) {
	f.Add("sk-live-Zq8/Wx+3vT9", "before ", " after")
	f.Add("p@ss:w0rd", `{"e":"`, `"}`)
	f.Add("naïve∑secret", "x", "")
	f.Fuzz(func(t *testing.T, secret, before, after string) {
		if len(secret) < 8 || strings.ContainsAny(secret, "*\r\n") {
			return
		}
		j, _ := json.Marshal(secret)
		m := New(secret)
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), string(j[1 : len(j)-1]),
			strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`), base64.StdEncoding.EncodeToString([]byte(secret))} {
			for _, out := range []string{m.Exact(before + form + after), m.Mask(before + form + after)} {
				if strings.Contains(out, secret) {
					t.Fatalf("secret %q (as %q) in %q", secret, form, out)
				}
			}
		}
	})
}

// A key whose variable ends in white space is sent trimmed (Go trims header
// values): the trimmed key is masked too.
func TestSecretWithWhiteSpace(t *testing.T) {
	m := New("correcthorsebatterystaple \t")
	if got := m.Exact("key correcthorsebatterystaple."); got != "key ***." {
		t.Errorf("Exact = %q, want %q", got, "key ***.")
	}
}

// .NET's System.Text.Json writes "+" as \u002B by default: a key with a +
// echoed in such a JSON answer is masked.
func TestDotnetJSON(t *testing.T) {
	const key = "Zq8/Wx+3vT9=pL2k"
	m := New(key)
	if got := m.Exact(`{"content":"your key Zq8/Wx\u002B3vT9=pL2k"}`); got != `{"content":"your key ***"}` {
		t.Errorf("Exact = %q", got)
	}
}
