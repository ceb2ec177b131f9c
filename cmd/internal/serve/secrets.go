package serve

import (
	"os"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
)

// secretSources are where the server's secrets come from: fixed ones (its
// token, the user info and key-like query values of the upstreams' base
// URLs) and the environment variables holding the upstreams' API keys.
type secretSources struct {
	fixed   []string
	keyEnvs []string
}

func newSecretSources(token string, ups map[string]Upstream) secretSources {
	src := secretSources{fixed: []string{token}}
	for _, u := range ups {
		if u.APIKeyEnv != "" {
			src.keyEnvs = append(src.keyEnvs, u.APIKeyEnv)
		}
		src.fixed = append(src.fixed, redact.URLSecrets(u.BaseURL)...)
	}
	slices.Sort(src.keyEnvs)
	src.keyEnvs = slices.Compact(src.keyEnvs)
	return src
}

// now are the API keys as the environment holds them now.
func (src secretSources) now() []string {
	keys := make([]string, len(src.keyEnvs))
	for k, name := range src.keyEnvs {
		keys[k] = os.Getenv(name)
	}
	return keys
}

// mask is the server's masker for the secrets configured now: the API keys
// are read from the environment at each request, so a key changed in the
// environment is masked from the next request on.
func (s *Server) mask() *redact.Masker {
	keys := s.secrets.now()
	id := strings.Join(keys, "\x00")
	if c := s.masks.Load(); c != nil && c.keys == id {
		return c.m
	}
	c := &cachedMasker{keys: id, m: redact.New(append(keys, s.secrets.fixed...)...)}
	s.masks.Store(c)
	return c.m
}

type cachedMasker struct {
	keys string // the API keys it was made for
	m    *redact.Masker
}
