package transformer

import (
	"testing"

	"github.com/jeirt/jeirt/model/simd"
)

// TestFixturesAtEveryLevel runs the three fixture checks at each vector
// level of model/simd this CPU has besides the default one (which the
// plain tests cover), the pure-Go one included: every level must match the
// reference outputs within the same tolerances.
func TestFixturesAtEveryLevel(t *testing.T) {
	def := simd.Current()
	for _, l := range simd.Levels() {
		if l == def {
			continue
		}
		t.Run(l.String(), func(t *testing.T) {
			old := simd.SetLevel(l)
			defer simd.SetLevel(old)
			t.Run("bert", TestBERTMatchesFixture)
			t.Run("mpnet", TestMPNetMatchesFixture)
			t.Run("modernbert", TestModernBERTMatchesFixture)
			t.Run("mpnet-reference", TestMPNetAgainstReference)
			t.Run("modernbert-reference", TestModernBERTAgainstReference)
		})
	}
}
