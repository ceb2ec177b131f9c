package transformer

import (
	"testing"

	"github.com/jeirt/jeirt/model/kernel"
)

// TestFixturesAtEveryLevel runs the three fixture checks at each vector
// level of model/kernel this CPU has besides the default one (which the
// plain tests cover), the pure-Go one included: every level must match the
// reference outputs within the same tolerances.
func TestFixturesAtEveryLevel(t *testing.T) {
	def := kernel.Current()
	for _, l := range kernel.Levels() {
		if l == def {
			continue
		}
		t.Run(l.String(), func(t *testing.T) {
			old := kernel.SetLevel(l)
			defer kernel.SetLevel(old)
			t.Run("bert", TestBERTMatchesFixture)
			t.Run("mpnet", TestMPNetMatchesFixture)
			t.Run("modernbert", TestModernBERTMatchesFixture)
			t.Run("mpnet-reference", TestMPNetAgainstReference)
			t.Run("modernbert-reference", TestModernBERTAgainstReference)
		})
	}
}
