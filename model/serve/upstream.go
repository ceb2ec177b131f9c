package serve

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/jeirt/jeirt/model"
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
	b, err := model.ReadInputFile(path, model.MaxDocumentBytes, "an upstreams file")
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
			return nil, fmt.Errorf("%s: base_url %q is not an http(s) URL", where, u.BaseURL)
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
