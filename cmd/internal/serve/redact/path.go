package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// pathSecrets are the indexes of the segments of a URL path (split at /,
// as written) that carry a key: a segment after one named like a key
// (/key/VALUE, /token/VALUE), a segment shaped like a provider's key
// (secretPatterns: sk-..., AKIA..., hf_..., a JSON web token) and one
// holding a run of 16 or more letters and digits, mixed (a key of no
// known shape: hex, base62); a model or deployment name such as
// gpt-4o-mini-2024-07-18 has no such run.
func pathSecrets(segments []string) []int {
	var out []int
	for k, seg := range segments {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			dec = seg
		}
		prev := ""
		if k > 0 {
			prev, _ = url.PathUnescape(segments[k-1])
		}
		if dec != "" && (keyLikeName.MatchString(prev) || keyShaped(dec) || randomRun(dec)) {
			out = append(out, k)
		}
	}
	return out
}

func keyShaped(s string) bool {
	for _, re := range secretPatterns[2:] { // the providers' shapes, not the key=value pairs
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

var alnumRun = regexp.MustCompile(`[A-Za-z0-9]{16,}`)

func randomRun(s string) bool {
	for _, run := range alnumRun.FindAllString(s, -1) {
		digits := 0
		for _, r := range run {
			if r >= '0' && r <= '9' {
				digits++
			}
		}
		if digits >= 2 && len(run)-digits >= 2 {
			return true
		}
	}
	return false
}

// maskPath is the URL's path with its key segments (pathSecrets) ***.
func maskPath(u *url.URL) {
	segs := strings.Split(u.EscapedPath(), "/")
	idx := pathSecrets(segs)
	if len(idx) == 0 {
		return
	}
	for _, k := range idx {
		segs[k] = "***"
	}
	p := strings.Join(segs, "/")
	u.RawPath = ""
	u.Path, _ = url.PathUnescape(p)
}

// pathSecretValues are the key segments of raw's path, as written and
// decoded: URLSecrets' share of the path.
func pathSecretValues(u *url.URL) []string {
	segs := strings.Split(u.EscapedPath(), "/")
	var out []string
	for _, k := range pathSecrets(segs) {
		out = append(out, segs[k])
		if d, err := url.PathUnescape(segs[k]); err == nil && d != segs[k] {
			out = append(out, d)
		}
	}
	return out
}
