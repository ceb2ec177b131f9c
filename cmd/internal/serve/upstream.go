package serve

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"gopkg.in/yaml.v3"
)

// Upstream is the OpenAI-compatible server of one model of the checkpoint.
type Upstream struct {
	// Name is the model's name in the checkpoint.
	Name string `yaml:"name" json:"name"`
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions"
	// (for example https://api.openai.com/v1 or http://127.0.0.1:8000/v1).
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable holding the API key sent as a
	// bearer token; "" sends none. The key itself never appears in the file.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env"`
	// Model is the name the upstream knows the model by; "" means Name.
	Model string `yaml:"model" json:"model"`
}

// ReadUpstreams reads an upstreams file, YAML or JSON (YAML's subset):
//
//	upstreams:
//	  - name: gpt-4o
//	    base_url: https://api.openai.com/v1
//	    api_key_env: OPENAI_API_KEY
//	  - name: llama-3.1-8b
//	    base_url: http://127.0.0.1:8000/v1
//	    model: meta-llama/Llama-3.1-8B-Instruct
//
// or the list alone. Unknown fields, a missing name or base_url, a base_url
// that is not http(s), a repeated name and an api_key_env naming an unset
// variable are errors naming the file and entry.
func ReadUpstreams(path string) (map[string]Upstream, error) {
	b, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "an upstreams file")
	if err != nil {
		return nil, err
	}
	var list []Upstream
	var doc struct {
		Upstreams []Upstream `yaml:"upstreams"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err == nil {
		list = doc.Upstreams
	} else {
		dec = yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err2 := dec.Decode(&list); err2 != nil {
			if tab := model.YAMLError(err, b, path); strings.Contains(tab.Error(), "tabs are not allowed") {
				return nil, tab
			}
			return nil, fmt.Errorf("%s: want a list of upstreams (name, base_url, api_key_env, model) or {upstreams: [...]}: %v", path, err)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no upstreams", path)
	}
	out := map[string]Upstream{}
	for k, u := range list {
		where := fmt.Sprintf("%s: upstream %d", path, k+1)
		if u.Name == "" {
			return nil, fmt.Errorf("%s: no name", where)
		}
		where += fmt.Sprintf(" (%s)", u.Name)
		pu, err := url.Parse(u.BaseURL)
		if u.BaseURL == "" || err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("%s: base_url %q is not an http(s) URL", where, MaskURL(u.BaseURL))
		}
		u.BaseURL = strings.TrimRight(u.BaseURL, "/")
		if u.APIKeyEnv != "" && os.Getenv(u.APIKeyEnv) == "" {
			return nil, fmt.Errorf("%s: api_key_env %s is not set in the environment", where, u.APIKeyEnv)
		}
		if u.Model == "" {
			u.Model = u.Name
		}
		if _, dup := out[u.Name]; dup {
			return nil, fmt.Errorf("%s: name %q is repeated", where, u.Name)
		}
		out[u.Name] = u
	}
	return out, nil
}

// URL is the upstream's base URL as serve shows it (replies, logs,
// /v1/jeirt/models): with any password or key-like query value masked.
func (u Upstream) URL() string { return MaskURL(u.BaseURL) }

// MaskURL is raw with the password of its user info and the values of
// key-like query parameters (key, api_key, token, secret, signature, ...)
// replaced by ***; a URL that does not parse is masked as text (MaskSecrets).
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return MaskSecrets(raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "***")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if keyLikeName.MatchString(k) {
				q[k] = []string{"***"}
			}
		}
		u.RawQuery = q.Encode()
	}
	return strings.Replace(u.String(), "%2A%2A%2A", "***", -1)
}

// keyLikeName matches names of fields, headers and query parameters that
// carry credentials.
var keyLikeName = regexp.MustCompile(`(?i)^(x-)?(api[-_]?key|key|access[-_]?token|auth[-_]?token|token|secret|client[-_]?secret|password|passwd|pwd|sig|signature|authorization|credential|session)$`)

// secretPatterns are the shapes API keys and bearer tokens come in. Each
// match is replaced by its first group (a label such as "Bearer ") and ***.
var secretPatterns = []*regexp.Regexp{
	// Authorization schemes and key=value / "key": "value" pairs.
	regexp.MustCompile(`(?i)(\b(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{4,}`),
	regexp.MustCompile(`(?i)((?:api[-_]?key|x-api-key|access[-_]?token|auth[-_]?token|secret|password|passwd|authorization)["']?\s*[:=]\s*["']?)[^\s"',;&}]{4,}`),
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

// MaskSecrets replaces in s anything shaped like an API key or a bearer
// token, and every value of extra (the configured keys themselves), by ***.
func MaskSecrets(s string, extra ...string) string {
	for _, k := range extra {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "***")
		}
	}
	for _, re := range secretPatterns {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			return re.FindStringSubmatch(m)[1] + "***"
		})
	}
	return s
}

// maxExcerpt is the most of an upstream's error body serve passes on.
const maxExcerpt = 300

// Excerpt is what serve says of an upstream's error body: secrets masked
// (MaskSecrets, with the configured keys), control characters and runs of
// white space made single spaces, cut to about 300 bytes.
func Excerpt(body []byte, keys ...string) string {
	s := MaskSecrets(string(body), keys...)
	s = longMixed.ReplaceAllStringFunc(s, func(m string) string {
		if strings.IndexFunc(m, unicode.IsDigit) < 0 || strings.IndexFunc(m, unicode.IsLetter) < 0 {
			return m
		}
		return "***"
	})
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… (%d bytes)", len(body))
	}
	return s
}

// keys are the API keys of the upstreams as the environment holds them now.
func keys(ups map[string]Upstream) []string {
	var out []string
	for _, u := range ups {
		if u.APIKeyEnv != "" {
			if k := os.Getenv(u.APIKeyEnv); k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}
