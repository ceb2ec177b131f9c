package eval

import "testing"

// FuzzParseRunMetrics feeds metrics.json contents to ParseRunMetrics: every
// input gives metrics or a short error.
func FuzzParseRunMetrics(f *testing.F) {
	f.Add([]byte(`{"test":{"auc":0.8,"accuracy":0.7},"val":{"auc":0.75}}`))
	f.Add([]byte(`{"test":{"auc":"NaN"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParseRunMetrics("metrics.json", raw); err != nil && len(err.Error()) > 4096 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
	})
}
