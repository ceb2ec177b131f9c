package redact

import (
	"bytes"
	"slices"
	"testing"
)

func lines(ls ...string) [][]byte {
	var out [][]byte
	for _, l := range ls {
		out = append(out, []byte(l))
	}
	return out
}

// An event passes line by line, its lines kept, unless a configured secret
// stands across its data lines: then its data goes as one line, masked.
func TestEvent(t *testing.T) {
	const key = "correcthorsebatterystaple"
	m := New(key)
	for _, c := range []struct {
		name string
		in   [][]byte
		want string
	}{
		{"no secret, two data lines kept", lines("event: x\n", "data: {\"a\":\n", "data: 1}\n", "\n"), "event: x\ndata: {\"a\":\ndata: 1}\n\n"},
		{"a secret within a line", lines("data: {\"c\":\""+key+"\"}\r\n", "\r\n"), "data: {\"c\":\"***\"}\r\n\r\n"},
		{"a secret across two data lines", lines("id: 7\n", "data: {\"c\":\"correct\n", "data:horsebattery\n", "data: staple\"}\n", "\n"), "id: 7\ndata: {\"c\":\"***\"}\n\n"},
		{"across lines, one masked within a line too", lines("data: "+key+" correcthorse\n", "data: batterystaple\n", "\n"), "data: *** ***\n\n"},
		{"an event cut before its blank line", lines("data: correcthorse\n", "data: batterystaple"), "data: ***\n"},
	} {
		if got := string(m.Event(c.in)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// Without configured secrets every event passes byte for byte.
	in := lines("data: a\n", "data: b\n", ": note\n", "\n")
	if got := Text.Event(in); !bytes.Equal(got, bytes.Join(in, nil)) {
		t.Errorf("no secrets: %q", got)
	}
}

// A path segment that carries a key is masked in URL and is one of
// URLSecrets; the segments of an API root and of model or deployment
// names are not.
func TestPathSecrets(t *testing.T) {
	for _, c := range []struct {
		raw, shown string
		secrets    []string
	}{
		{"https://gw.example.com/kq7Zx2Lm9Pw4Rt8Yv3Bn/v1", "https://gw.example.com/***/v1", []string{"kq7Zx2Lm9Pw4Rt8Yv3Bn"}},
		{"https://h/key/plainword/v1", "https://h/key/***/v1", []string{"plainword"}},
		{"https://h/v1/sk-abcdef123456/", "https://h/v1/***/", []string{"sk-abcdef123456"}},
		{"https://h/token/a%2Fb%20c/v1", "https://h/token/***/v1", []string{"a%2Fb%20c", "a/b c"}},
		{"https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18", "https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18", nil},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", nil},
		{"https://h/550e8400-e29b-41d4-a716-446655440000/v1", "https://h/550e8400-e29b-41d4-a716-446655440000/v1", nil},
	} {
		if got := Text.URL(c.raw); got != c.shown {
			t.Errorf("URL(%s) = %s, want %s", c.raw, got, c.shown)
		}
		if got := URLSecrets(c.raw); !slices.Equal(got, c.secrets) {
			t.Errorf("URLSecrets(%s) = %q, want %q", c.raw, got, c.secrets)
		}
	}
}
