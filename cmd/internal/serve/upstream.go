package serve

import "github.com/jeirt/jeirt/cmd/internal/serve/upstream"

// Upstream is the OpenAI-compatible server of one model of the checkpoint
// (upstream.Upstream).
type Upstream = upstream.Upstream

// ReadUpstreams reads an upstreams file (upstream.Read).
func ReadUpstreams(path string) (map[string]Upstream, error) { return upstream.Read(path) }
