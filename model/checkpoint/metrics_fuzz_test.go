package checkpoint

import (
	"testing"
)

// FuzzParseRunMetrics feeds metrics.json contents to ParseRunMetrics: every
// input gives metrics or a short error.
func FuzzParseRunMetrics(f *testing.F) {
	f.Add([]byte(`{"test":{"auc":0.8,"accuracy":0.7},"val":{"auc":0.75}}`))
	f.Add([]byte(`{"test":{"auc":"NaN"}}`))
	// Undefined figures are null: no test cells, no validation loss, a norm
	// correlation of one item.
	f.Add([]byte(`{"test":{"n":0,"accuracy":null,"auc":null},"history":[{"epoch":1,"train_loss":0.6,"val_loss":null,"val_acc":null}],"geometry":{"norm_error_spearman":null,"norm_error_note":"1 pair(s)","items":1},"warnings":["the baselines did not finish (interrupted): metrics.json has none"]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := ParseRunMetrics("metrics.json", raw); err != nil && len(err.Error()) > 4096 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
	})
}
