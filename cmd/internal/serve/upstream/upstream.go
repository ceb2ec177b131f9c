// Package upstream is what jeirt serve knows of the models' OpenAI-compatible
// servers: the upstreams file, the checks of a base URL, the endpoints under
// it, the redirect policy of the client that calls them, and how a chat
// stream (server-sent events) ends.
package upstream

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/yamlerr"
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

// Read reads an upstreams file, YAML or JSON (YAML's subset):
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
// that is not http(s) or not an API root (CheckBaseURL), a repeated name
// and an api_key_env naming an unset variable are errors naming the file
// and entry, with any secret of the file masked.
func Read(path string) (map[string]Upstream, error) {
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
			if tab := yamlerr.Wrap(err, b, path); strings.Contains(tab.Error(), "tabs are not allowed") {
				return nil, tab
			}
			return nil, fmt.Errorf("%s: want a list of upstreams (name, base_url, api_key_env, model) or {upstreams: [...]}: %s", path, redact.Text.Mask(err.Error()))
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
		if err := CheckBaseURL(u.BaseURL); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
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
// /v1/jeirt/models): with its user info and key-like query values masked.
func (u Upstream) URL() string { return redact.Text.URL(u.BaseURL) }

// Endpoint is the URL of path under the base URL: its path joined, its
// query (a key some providers take there) kept.
func (u Upstream) Endpoint(path ...string) (string, error) {
	pu, err := url.Parse(u.BaseURL)
	if err != nil {
		return "", err
	}
	return pu.JoinPath(path...).String(), nil
}

// CheckBaseURL refuses a base URL an OpenAI client could not use: not
// http(s), no host, or a path that is not an API root (none at all, where
// OpenAI-compatible servers serve under /v1, or a full endpoint).
func CheckBaseURL(raw string) error {
	pu, err := url.Parse(raw)
	if raw == "" || err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return fmt.Errorf("base_url %q is not an http(s) URL", redact.Text.URL(raw))
	}
	p := strings.TrimRight(pu.Path, "/")
	switch {
	case p == "":
		fix := *pu
		fix.Path = "/v1"
		return fmt.Errorf("base_url %q has no path: chats would go to %s/chat/completions, and OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM) serve under /v1: write base_url: %s",
			redact.Text.URL(raw), strings.TrimRight(redact.Text.URL(pu.Scheme+"://"+pu.Host), "/"), redact.Text.URL(fix.String()))
	case strings.HasSuffix(p, "/chat/completions") || strings.HasSuffix(p, "/completions") || strings.HasSuffix(p, "/models"):
		fix := *pu
		fix.Path = p[:strings.LastIndex(p, "/")]
		fix.Path = strings.TrimSuffix(fix.Path, "/chat")
		return fmt.Errorf("base_url %q is an endpoint, not the API root that jeirt adds /chat/completions to: write base_url: %s", redact.Text.URL(raw), redact.Text.URL(fix.String()))
	}
	return nil
}
