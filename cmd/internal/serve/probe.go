package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// probeTimeout bounds the start-up check of each upstream.
const probeTimeout = 5 * time.Second

// probeUpstreams asks each upstream for GET base_url/models (OpenAI's model
// list) and logs a warning for each that cannot be reached, rejects its key,
// does not answer it, or answers something that is not JSON. A warning, not
// a refusal: an upstream may come up after the router. It returns the
// warnings, in the upstreams' order by name.
func (s *Server) probeUpstreams(ctx context.Context, timeout time.Duration) []string {
	names := make([]string, 0, len(s.upstreams))
	for name := range s.upstreams {
		names = append(names, name)
	}
	slices.Sort(names)
	warn := make([]string, len(names))
	var wg sync.WaitGroup
	for k, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			warn[k] = s.probe(ctx, s.upstreams[name], timeout)
		}()
	}
	wg.Wait()
	var out []string
	for _, w := range warn {
		if w != "" {
			s.set.Log.Printf("serve: warning: %s", w)
			out = append(out, s.mask().Mask(w))
		}
	}
	return out
}

// probe is the warning about up, or "" when it answers its model list.
func (s *Server) probe(ctx context.Context, up Upstream, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	where := "upstream " + quote(up.Name) + " (" + up.URL() + ")"
	endpoint, err := up.Endpoint("models")
	if err != nil {
		return where + ": " + err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return where + ": " + err.Error()
	}
	if up.APIKeyEnv != "" {
		req.Header.Set("Authorization", "Bearer "+os.Getenv(up.APIKeyEnv))
	}
	mask := s.mask()
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return where + " did not answer GET …/models within " + timeout.String() + ": chats routed to it will fail (502) until it answers"
		}
		return where + " is unreachable now (" + mask.Mask(err.Error()) + "): chats routed to it will fail (502) until it answers"
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return where + " refused the key of api_key_env " + up.APIKeyEnv + " on GET …/models (" + mask.Mask(resp.Status) + "): " + mask.Excerpt(body)
	case resp.StatusCode == http.StatusNotFound:
		return where + " answered 404 to GET …/models: is base_url the API root that /chat/completions is under (…/v1)?"
	case resp.StatusCode/100 != 2:
		return where + " answered " + mask.Mask(resp.Status) + " to GET …/models: " + mask.Excerpt(body)
	case !json.Valid(body):
		return where + " answered GET …/models with " + mask.Mask(resp.Header.Get("Content-Type")) + ", not JSON: is base_url an OpenAI-compatible API root (…/v1)? " + mask.Excerpt(body)
	}
	return ""
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
