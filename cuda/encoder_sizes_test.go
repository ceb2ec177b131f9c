//go:build cgo

package cuda

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/encoder/transformer"
	"github.com/jeirt/jeirt/train/backend"
)

// encoderSize is the shape of a published sentence encoder.
type encoderSize struct {
	name, arch                                string
	hidden, layers, heads, inter, vocab, maxP int
}

// The sizes of gpu-check's throughput runs: all-MiniLM-L6-v2,
// all-mpnet-base-v2 and ModernBERT-large.
var encoderSizes = []encoderSize{
	{"MiniLM", "bert", 384, 6, 12, 1536, 30522, 512},
	{"MPNetBase", "mpnet", 768, 12, 12, 3072, 30527, 514},
	{"ModernBERTLarge", "modernbert", 1024, 28, 16, 2624, 50368, 8192},
}

// sizedWeights returns weights of shape s: N(0, 0.02) values from rng, or,
// with rng nil, no values at all (shapes only, for the dry device).
func sizedWeights(s encoderSize, rng *rand.Rand) *transformer.Weights {
	vec := func(n int, mean float64) []float32 {
		if rng == nil {
			return nil
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + 0.02*rng.NormFloat64())
		}
		return v
	}
	d, ff := s.hidden, s.inter
	lin := func(out, in int, bias bool) transformer.Linear {
		l := transformer.Linear{W: vec(out*in, 0), Out: out, In: in}
		if bias {
			l.B = vec(out, 0)
		}
		return l
	}
	w := &transformer.Weights{Arch: s.arch, Hidden: d, Heads: s.heads, Intermediate: ff, Eps: 1e-12,
		Word: vec(s.vocab*d, 0), EmbNormW: vec(d, 1), Pooling: []string{transformer.PoolMean}, Normalize: true}
	switch s.arch {
	case "bert", "mpnet":
		w.Position, w.EmbNormB = vec(s.maxP*d, 0), vec(d, 0)
		if s.arch == "bert" {
			w.TokenType0 = vec(d, 0)
		} else {
			w.Buckets, w.MaxDistance, w.RelBias = 32, 128, vec(32*s.heads, 0)
		}
		for range s.layers {
			w.Layers = append(w.Layers, transformer.LayerWeights{
				Q: lin(d, d, true), K: lin(d, d, true), V: lin(d, d, true), O: lin(d, d, true),
				In: lin(ff, d, true), Out: lin(d, ff, true),
				AttnNormW: vec(d, 1), AttnNormB: vec(d, 0), MLPNormW: vec(d, 1), MLPNormB: vec(d, 0),
			})
		}
	case "modernbert":
		w.Eps, w.FinalNormW = 1e-5, vec(d, 1)
		for i := range s.layers {
			l := transformer.LayerWeights{Q: lin(3*d, d, false), O: lin(d, d, false), In: lin(2*ff, d, false),
				Out: lin(d, ff, false), MLPNormW: vec(d, 1), Theta: 160000}
			if i > 0 {
				l.AttnNormW = vec(d, 1)
			}
			if i%3 != 0 {
				l.Theta, l.Window = 10000, 64
			}
			w.Layers = append(w.Layers, l)
		}
	}
	return w
}

// paddedBatch is b random texts of l tokens (no padding), laid out for
// forwardPadded.
func paddedBatch(s encoderSize, b, l int, rng *rand.Rand) (ids, pos []int32, mask []float32) {
	ids, mask = make([]int32, b*l), make([]float32, b*l)
	for k := range ids {
		ids[k], mask[k] = int32(rng.IntN(s.vocab)), 1
	}
	if s.arch != "modernbert" {
		pos = make([]int32, b*l)
		for k := range pos {
			pos[k] = int32(k % l)
			if s.arch == "mpnet" {
				pos[k] += 2 // after the pad id 1, as MPNet numbers positions
			}
		}
	}
	return ids, pos, mask
}

type dryDense struct{}

func (dryDense) describe() string { return "none (dry run)" }

func (dryDense) precision() Precision { return FP32 }

func (dryDense) linear(y, x, w gpu.Handle, n, out, in int) error { return nil }

// TestEncoderLaunchLimitsAtFullSize runs the encoder forward of the three
// gpu-check sizes at batch 256 x 128 tokens, and ModernBERT-large at 8 x
// 8,192, on the dry device: every launch fits sm_90's limits (grids, 128
// threads of attention with up to 44 KiB of static shared memory).
func TestEncoderLaunchLimitsAtFullSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		size encoderSize
		b, l int
	}{{encoderSizes[0], 256, 128}, {encoderSizes[1], 256, 128}, {encoderSizes[2], 256, 128}, {encoderSizes[2], 8, 8192}} {
		d := harness.NewDry()
		f, err := newEncoderForward(d, dryDense{}, sizedWeights(c.size, nil))
		if err != nil {
			t.Fatal(err)
		}
		ids, pos, mask := paddedBatch(c.size, 1, c.l, rng)
		for range c.b - 1 {
			ids, mask = append(ids, ids[:c.l]...), append(mask, mask[:c.l]...)
			if pos != nil {
				pos = append(pos, pos[:c.l]...)
			}
		}
		if _, err := f.forwardPadded(c.b, c.l, ids, pos, mask); err != nil {
			t.Fatalf("%s at %d x %d: %v", c.size.name, c.b, c.l, err)
		}
		k := attentionKernel(c.size.hidden / c.size.heads)
		g, _ := d.Largest(k)
		t.Logf("%s %d x %d: %s grid %v", c.size.name, c.b, c.l, k, g)
	}
	// K (rows padded by one float), V, 16 queries, 32 mask values, and 16 x
	// 32 scores and weights.
	for _, dh := range []int{32, 64, 96, 128} {
		k := attentionKernel(dh)
		if n, want := harness.StaticShared()[k], int64(4*(32*(dh+1)+32*dh+16*dh+32+2*16*32)); n != want {
			t.Errorf("%s's static shared memory from the PTX: %d bytes, want %d", k, n, want)
		}
	}
}

// TestHarnessEncoderSeam: backend.EncoderOn moves a model folder's encoder to
// a device with the Encoders seam and leaves other kinds and the CPU alone.
func TestHarnessEncoderSeam(t *testing.T) {
	dir, exp := openFixture(t, "tiny-mpnet")
	cpu, err := encoder.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	on, err := backend.EncoderOn("cuda-harness", cpu)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := on.(*Encoder)
	if !ok {
		t.Fatalf("EncoderOn gave a %T", on)
	}
	defer g.Close()
	v, err := on.Encode(context.Background(), []string{exp.Sentences[3].Text})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff64(v[0], exp.Sentences[3].PooledNormalized); !(d <= 2e-6) {
		t.Errorf("off by %.3g", d)
	}
	if same, err := backend.EncoderOn("cpu", cpu); err != nil || same != backend.TextEncoder(cpu) {
		t.Errorf("EncoderOn(cpu) = %T, %v", same, err)
	}
	hash, _ := encoder.Open("hash:8")
	if same, err := backend.EncoderOn("cuda-harness", hash); err != nil || same != backend.TextEncoder(hash) {
		t.Errorf("EncoderOn(cuda-harness, hash) = %T, %v", same, err)
	}
}
