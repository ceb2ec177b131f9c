package checkpoint

import (
	"strings"
	"testing"
)

// A domain reference's threshold must be finite and its quantile in [0, 1].
func TestParseDomainLimits(t *testing.T) {
	for _, meta := range []string{`"threshold":"+Inf","quantile":"0.95"`, `"threshold":"0.3","quantile":"2"`} {
		b := safetensorsBytes(`{"reference":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"__metadata__":{`+meta+`}}`, 4)
		if _, err := ParseDomain("domain.safetensors", b); err == nil || !strings.Contains(err.Error(), "domain.safetensors: metadata") {
			t.Errorf("%s: got %v", meta, err)
		}
	}
}
