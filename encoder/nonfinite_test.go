package encoder

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// nanEncoder gives item texts containing "bad" a vector with one NaN or
// infinite value.
type nanEncoder struct {
	Hash
	bad float32
}

func (e *nanEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.Hash.Encode(ctx, texts)
	for k, t := range texts {
		if strings.Contains(t, "bad") {
			vecs[k][2] = e.bad
		}
	}
	return vecs, err
}

// A NaN or infinite vector from an encoder, or in a cache part, is an error
// naming the encoder or the part and the item (a NaN part was returned as
// it was, and encode wrote NaN vectors with exit 0).
func TestEncodeItemsRefusesNonFiniteVectors(t *testing.T) {
	ctx := context.Background()
	ids, texts := []string{"a", "b", "c"}, []string{"good one", "bad one", "good two"}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		cache := &Cache{Dir: t.TempDir()}
		enc := &nanEncoder{Hash: Hash{Width: 8}, bad: bad}
		_, err := EncodeItems(ctx, enc, ids, texts, ItemOptions{Cache: cache})
		if err == nil || !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), `item "b" a vector whose value 2 is `+fmtF(bad)) ||
			!strings.Contains(err.Error(), enc.Fingerprint()) {
			t.Errorf("encoder giving %v: %v", bad, err)
		}
		if m, _, _ := cache.load(enc.Fingerprint()); len(m) != 0 {
			t.Errorf("encoder giving %v: %d vectors cached", bad, len(m))
		}

		// A damaged part in the cache: the same encoder's fingerprint, finite
		// output, a part holding a non-finite vector for b.
		good := &Hash{Width: 8}
		vecs, _ := good.Encode(ctx, texts)
		vecs[1][5] = bad
		hashes := []string{TextHash(texts[0]), TextHash(texts[1]), TextHash(texts[2])}
		if err := cache.store(good.Fingerprint(), ids, hashes, vecs, 8); err != nil {
			t.Fatal(err)
		}
		_, parts, _ := cache.parts(good.Fingerprint())
		_, err = EncodeItems(ctx, good, ids, texts, ItemOptions{Cache: cache})
		if len(parts) != 1 || err == nil || !strings.Contains(err.Error(), "cache "+parts[0]+`: item "b": value 5 of its vector is `+fmtF(bad)) {
			t.Errorf("cache part with %v: %v", bad, err)
		}
	}
}

func fmtF(x float32) string {
	switch {
	case math.IsNaN(float64(x)):
		return "NaN"
	case x > 0:
		return "+Inf"
	}
	return "-Inf"
}
