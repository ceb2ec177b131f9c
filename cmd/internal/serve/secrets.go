package serve

import (
	"os"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
)

// configuredSecrets are the secrets of the server's settings and upstreams
// as the environment holds them now.
func configuredSecrets(token string, ups map[string]Upstream) []string {
	out := []string{token}
	for _, u := range ups {
		if u.APIKeyEnv != "" {
			if k := os.Getenv(u.APIKeyEnv); k != "" {
				out = append(out, k)
			}
		}
		out = append(out, redact.URLSecrets(u.BaseURL)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// mask is the server's masker for the secrets configured now: the API keys
// are read from the environment at each request, so a key changed in the
// environment is masked from the next request on.
func (s *Server) mask() *redact.Masker {
	secrets := configuredSecrets(s.set.Token, s.upstreams)
	key := strings.Join(secrets, "\x00")
	if c := s.masks.Load(); c != nil && c.key == key {
		return c.m
	}
	c := &cachedMasker{key: key, m: redact.New(secrets...)}
	s.masks.Store(c)
	return c.m
}

type cachedMasker struct {
	key string
	m   *redact.Masker
}
