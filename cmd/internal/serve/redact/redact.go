// Package redact is jeirt serve's one masking function: every string that
// reaches a client or the log passes a Masker, which replaces the
// configured secrets (API keys, the passwords, user names and key-like query
// values of upstream URLs, the service's own token) in every encoding they
// may take, and anything shaped like a URL credential or an API key, by ***.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Masker is the one masking function of the service: every string that
// reaches a client or the log passes Mask (or, for the body of a successful
// upstream answer, Exact). It knows the configured secrets in every
// encoding an answer or an error text may carry them in, and the shapes of
// keys and credentials in general.
type Masker struct {
	exact *strings.Replacer // nil: no configured secret
	short []string          // configured secrets too short to mask as text
}

// minSecret is the shortest configured secret masked wherever it appears
// as text; a shorter one would mask ordinary words. Such secrets are still
// masked where they stand in a URL (user info, key parameters).
const minSecret = 4

// New is the Masker of secrets (empty strings are ignored).
func New(secrets ...string) *Masker {
	m := &Masker{}
	var forms []string
	var all []string
	for _, s := range secrets {
		all = append(all, s)
		// Go trims the white space around a header's value when it sends
		// it, so a key whose variable ends in a space or a tab reaches the
		// upstream, and comes back, without it.
		if t := strings.TrimSpace(s); t != s {
			all = append(all, t)
		}
	}
	for _, s := range all {
		if s == "" {
			continue
		}
		if len(s) < minSecret {
			m.short = append(m.short, s)
			continue
		}
		forms = append(forms, encodings(s)...)
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) }) // longest first
	forms = slices.Compact(forms)
	if len(forms) > 0 {
		pairs := make([]string, 0, 2*len(forms))
		for _, f := range forms {
			pairs = append(pairs, f, "***")
		}
		m.exact = strings.NewReplacer(pairs...)
	}
	return m
}

// encodings are the forms s takes in text: raw, URL-escaped (query and
// path, upper- and lower-case hex), JSON-escaped (Go's, with "/" as "\/",
// with non-ASCII as \u escapes, and .NET's), HTML-escaped, and base64 (standard and
// URL alphabets, at each of the three byte alignments, so that the base64
// of "Bearer KEY" or "user:KEY" is caught too).
func encodings(s string) []string {
	out := []string{s, url.QueryEscape(s), url.PathEscape(s), html.EscapeString(s)}
	j, _ := json.Marshal(s)
	js := string(j[1 : len(j)-1])
	out = append(out, js, strings.ReplaceAll(js, "/", `\/`), asciiJSON(s), strings.ReplaceAll(asciiJSON(s), "/", `\/`))
	if d := dotnetJSON(s); d != js {
		out = append(out, d)
	}
	for _, f := range out[:4] {
		if strings.Contains(f, "%") {
			out = append(out, pctHex.ReplaceAllStringFunc(f, strings.ToLower))
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := 0; pad < 3; pad++ {
			b := append(make([]byte, pad), s...)
			e := enc.EncodeToString(b)
			// The characters that depend on the padding bytes or on the
			// bytes after s are dropped: what is left appears in the
			// base64 of any text holding s at that alignment.
			start := []int{0, 2, 3}[pad]
			end := 4 * (len(b) / 3)
			if end-start >= minSecret {
				out = append(out, e[start:end])
			}
			if pad == 0 {
				out = append(out, e, strings.TrimRight(e, "="))
			}
		}
	}
	var keep []string
	for _, f := range out {
		if len(f) >= minSecret {
			keep = append(keep, f)
		}
	}
	return keep
}

var pctHex = regexp.MustCompile(`%[0-9A-F]{2}`)

// asciiJSON is s as a JSON string body with every non-ASCII rune a \u
// escape (Python's json.dumps default).
func asciiJSON(s string) string {
	var b strings.Builder
	j, _ := json.Marshal(s)
	for _, r := range string(j[1 : len(j)-1]) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// dotnetJSON is s as a JSON string body the way .NET's System.Text.Json
// writes it by default (JavaScriptEncoder.Default): besides the control
// characters, " & ' + < > ` and every non-ASCII rune are \u escapes with
// upper-case hex ("+" is \u002B: a key with a + echoed by such a server
// did not match any other form).
func dotnetJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r > 0x7E || strings.ContainsRune("\"&'+<>`", r):
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04X\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Exact replaces the configured secrets, in every encoding, by ***. It is
// what the body of a successful upstream answer passes: a model's answer
// keeps its words, and loses only the request's credentials echoed in it.
func (m *Masker) Exact(s string) string {
	if m.exact == nil {
		return s
	}
	return m.exact.Replace(s)
}

// Mask is Exact, then URL user info and key-like query parameters, then
// anything shaped like a key or a credential (secretPatterns).
func (m *Masker) Mask(s string) string {
	s = m.Exact(s)
	s = urlUserInfo.ReplaceAllStringFunc(s, func(x string) string {
		sub := urlUserInfo.FindStringSubmatch(x)
		if user, _, hasPass := strings.Cut(sub[2], ":"); hasPass {
			return sub[1] + user + ":***@"
		}
		return sub[1] + "***@"
	})
	s = urlKeyParam.ReplaceAllString(s, "${1}***")
	for _, re := range secretPatterns {
		s = re.ReplaceAllStringFunc(s, func(x string) string {
			sub := re.FindStringSubmatch(x)
			if v := x[len(sub[1]):]; strings.EqualFold(v, "bearer") || strings.EqualFold(v, "basic") {
				return x // "Authorization: Bearer ..." names the scheme, not a credential
			}
			return sub[1] + "***"
		})
	}
	return s
}

// URL is raw as serve shows it: a parsed URL with its password (or its user
// name, when it has no password: a key used as the user), the path
// segments that carry a key (pathSecrets) and the values of key-like query
// parameters replaced by ***; then Mask. A URL that does
// not parse is masked as text.
func (m *Masker) URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return m.Mask(raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "***")
		} else {
			u.User = url.User("***")
		}
	}
	maskPath(u)
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if keyLikeName.MatchString(k) {
				q[k] = []string{"***"}
			}
		}
		u.RawQuery = q.Encode()
	}
	return m.Mask(strings.ReplaceAll(u.String(), "%2A%2A%2A", "***"))
}

// Text is the Masker of text said before any secret is configured
// (errors about the upstreams file): URL user info, key parameters and key
// shapes.
var Text = New()

// Short are the configured secrets too short (under 4 bytes) to be masked
// in free text; they are masked only where they stand in a URL.
func (m *Masker) Short() []string { return m.short }

// URLSecrets are the secrets a URL carries: its user name and
// password (as written and decoded), the path segments that carry a key
// (pathSecrets) and the values of key-like query parameters (as written
// and decoded), with "user:password" for the basic
// authorization Go sends from them.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		user := u.User.Username()
		pass, has := u.User.Password()
		if has {
			out = append(out, pass, user+":"+pass)
			if _, rawPass, ok := strings.Cut(strings.SplitN(u.User.String(), "@", 2)[0], ":"); ok {
				out = append(out, rawPass)
			}
		} else {
			out = append(out, user, user+":", u.User.String())
		}
	}
	out = append(out, pathSecretValues(u)...)
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if dk, err := url.QueryUnescape(k); err == nil && keyLikeName.MatchString(dk) && v != "" {
			out = append(out, v)
			if dv, err := url.QueryUnescape(v); err == nil {
				out = append(out, dv)
			}
		}
	}
	return out
}

// keyLikeName matches names of fields, headers and query parameters that
// carry credentials: OpenAI's and most providers' key and token names,
// Azure's subscription-key and sig, Google's key, AWS's and GCS's signed-URL
// parameters.
var keyLikeName = regexp.MustCompile(`(?i)^(x-)?(api[-_]?key|key|apikey|access[-_]?key|access[-_]?token|auth[-_]?token|id[-_]?token|refresh[-_]?token|token|secret|client[-_]?secret|password|passwd|pwd|pass|sig|signature|authorization|auth|credential|session|subscription[-_]?key|ocp-apim-subscription-key|code|amz-signature|amz-credential|amz-security-token|goog-signature|goog-credential)$`)

// urlUserInfo is the user info of a URL in text: scheme://user[:password]@
// (spaces allowed: a URL that does not parse may have them there).
var urlUserInfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^\r\n/?#@"'<>\\]{1,256})@`)

// urlKeyParam is a key-like query parameter in text (after ?, & or ; or a
// JSON- or HTML-escaped &), with its value (which ends at a bracket, a
// comma or a quote: the text around a URL).
var urlKeyParam = regexp.MustCompile(`(?i)((?:[?&;]|\\u0026|&amp;)(?:x-)?(?:api[-_]?key|key|apikey|access[-_]?key|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|password|passwd|pwd|sig|signature|subscription[-_]?key|ocp-apim-subscription-key|code|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)[^&\s"'<>#\\()\[\]{},]+`)

// secretPatterns are the shapes API keys and bearer tokens come in. Each
// match is replaced by its first group (a label such as "Bearer ") and ***.
var secretPatterns = []*regexp.Regexp{
	// Authorization schemes (a credential after them has a digit or is
	// long: "bearer token" is words) and key=value / "key": "value" pairs.
	regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)(?:[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*|[A-Za-z0-9._~+/=-]{20,})`),
	regexp.MustCompile(`(?i)((?:api[-_]?key|x-api-key|access[-_]?token|auth[-_]?token|secret|password|passwd|authorization|subscription[-_]?key)["']?\s*[:=]\s*["']?)[^\s"',;&}]{4,}`),
	// Providers' key prefixes: OpenAI and Anthropic sk-, Stripe-like, AWS,
	// Google, GitHub, GitLab, Hugging Face, Slack; and JSON web tokens.
	regexp.MustCompile(`()\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{6,}`),
	regexp.MustCompile(`()\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	regexp.MustCompile(`()\bAIza[0-9A-Za-z_-]{20,}`),
	regexp.MustCompile(`()\b(?:gh[pousr]_|github_pat_|glpat-|hf_|xox[abprs]-)[A-Za-z0-9_-]{10,}`),
	regexp.MustCompile(`()\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
}

// longMixed is a run of 32 or more letters and digits, mixed, as keys of
// unknown providers are (and request ids, which an error excerpt can spare).
var longMixed = regexp.MustCompile(`\b[A-Za-z0-9_-]{32,}\b`)

// MaxExcerpt is the most of an upstream's error body Excerpt passes on.
const MaxExcerpt = 300

// Excerpt is what serve says of an upstream's error body: masked (Mask,
// and any run of 32 or more mixed letters and digits), control characters
// and runs of white space made single spaces, cut to about 300 bytes.
func (m *Masker) Excerpt(body []byte) string {
	s := m.Mask(string(body))
	s = longMixed.ReplaceAllStringFunc(s, func(x string) string {
		if strings.IndexFunc(x, unicode.IsDigit) < 0 || strings.IndexFunc(x, unicode.IsLetter) < 0 {
			return x
		}
		return "***"
	})
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) > MaxExcerpt {
		cut := MaxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… (%d bytes)", len(body))
	}
	return s
}
