package encoder

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A TF-IDF fit tells its Progress each step, in order, each ending done.
func TestTFIDFFitProgress(t *testing.T) {
	var calls []string
	e := &TFIDF{MinDF: 1, PowerIters: 2, Progress: func(step string, done, total int) {
		calls = append(calls, fmt.Sprintf("%s %d/%d", step, done, total))
	}}
	if err := e.Fit(context.Background(), []string{"alpha beta", "beta gamma", "gamma delta"}); err != nil {
		t.Fatal(err)
	}
	want := "terms 0/3,terms 3/3,rows 0/3,rows 3/3,svd 1/4,svd 2/4,svd 3/4,svd 4/4"
	if got := strings.Join(calls, ","); got != want {
		t.Errorf("progress %s, want %s", got, want)
	}
}
