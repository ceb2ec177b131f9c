//go:build cgo

package cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/jeirt/jeirt/cuda/internal/gpu"
	"github.com/jeirt/jeirt/cuda/internal/harness"
	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/encoder/transformer"
	"github.com/jeirt/jeirt/internal/stress"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// hostDense stands in for the GPU's dense products on the CPU harness: a
// float32 gemm (Gonum's, the BLAS the CPU encoders use by default) on the
// harness's device memory; with p TF32, on copies of the inputs rounded to
// TF32 as the tensor cores take them.
type hostDense struct{ p Precision }

func hostFloats(h gpu.Handle, n int) ([]float32, error) {
	b, _, err := harness.Bytes(uintptr(h))
	if err != nil {
		return nil, err
	}
	if len(b) < 4*n {
		return nil, fmt.Errorf("harness: %d floats at %#x run past the allocation (%d bytes)", n, h, len(b))
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n), nil
}

func (d hostDense) describe() string { return "host gemm (CPU harness, " + string(d.precision()) + ")" }

func (d hostDense) precision() Precision {
	if d.p == "" {
		return FP32
	}
	return d.p
}

func (d hostDense) linear(y, x, w gpu.Handle, n, out, in int) error {
	ys, err1 := hostFloats(y, n*out)
	xs, err2 := hostFloats(x, n*in)
	ws, err3 := hostFloats(w, out*in)
	if err := gpu.FirstErr(err1, err2, err3); err != nil {
		return fmt.Errorf("%w: linear %d x %d -> %d: %v", gpu.ErrLaunch, n, in, out, err)
	}
	if d.p == TF32 {
		xs, ws = roundedCopy(xs, roundTF32), roundedCopy(ws, roundTF32)
	}
	gonum.Implementation{}.Sgemm(blas.NoTrans, blas.Trans, n, out, in, 1, xs, in, ws, in, 0, ys, out)
	return nil
}

func roundedCopy(v []float32, round func(float32) float32) []float32 {
	c := make([]float32, len(v))
	for i, x := range v {
		c[i] = round(x)
	}
	return c
}

// hostBF16 stands in for cuBLAS's bfloat16 product on the harness: the
// bfloat16 inputs to_bf16 wrote, widened exactly to float32, and a float32
// gemm.
type hostBF16 struct{}

func (hostBF16) describe() string { return "host gemm on bfloat16 inputs (CPU harness)" }

func hostBF16s(h gpu.Handle, n int) ([]float32, error) {
	b, _, err := harness.Bytes(uintptr(h))
	if err != nil {
		return nil, err
	}
	if len(b) < 2*n {
		return nil, fmt.Errorf("harness: %d bfloat16 values at %#x run past the allocation (%d bytes)", n, h, len(b))
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits((uint32(b[2*i]) | uint32(b[2*i+1])<<8) << 16)
	}
	return v, nil
}

func (hostBF16) linearBF16(y, x16, w16 gpu.Handle, n, out, in int) error {
	ys, err1 := hostFloats(y, n*out)
	xs, err2 := hostBF16s(x16, n*in)
	ws, err3 := hostBF16s(w16, out*in)
	if err := gpu.FirstErr(err1, err2, err3); err != nil {
		return fmt.Errorf("%w: bfloat16 linear %d x %d -> %d: %v", gpu.ErrLaunch, n, in, out, err)
	}
	gonum.Implementation{}.Sgemm(blas.NoTrans, blas.Trans, n, out, in, 1, xs, in, ws, in, 0, ys, out)
	return nil
}

// hostReduced is the harness's encoderSeam.reduced: the dense products of
// each precision, emulated.
func hostReduced(g gpu.GPU, p Precision) (dense, error) {
	switch p {
	case TF32:
		return hostDense{p: TF32}, nil
	case BF16:
		return newBF16Dense(g, hostBF16{}), nil
	}
	return hostDense{}, nil
}

// encoderFixture is the part of a fixture's expected.json the GPU forward is
// checked against: float64 reference outputs of the whole pipeline.
type encoderFixture struct {
	Sentences []struct {
		Text             string    `json:"text"`
		PooledNormalized []float64 `json:"pooled_normalized"`
		MeanNormalized   []float64 `json:"mean_normalized"`
	} `json:"sentences"`
	PaddedBatch struct {
		SentenceIndices  []int       `json:"sentence_indices"`
		PooledNormalized [][]float64 `json:"pooled_normalized"`
	} `json:"padded_batch"`
}

// harnessSentences are the fixture sentences that the harness tests run
// by default: every CUDA thread of the harness runs on the CPU, and a
// fixture's 27 to 33 sentences, alone and in batches, took ten times as
// long. Four of 2 to 31 tokens (the empty text among them, and two past
// ModernBERT's sliding window of 8 either side) check every kernel of the
// three encoders, and padding in a batch; JEIRT_STRESS=full runs every
// sentence (those cut at max_seq_length, 128 tokens, too) and the
// fixture's padded batch.
var harnessSentences = []int{0, 1, 3, 22}

// harnessFixture is exp cut to harnessSentences, unless JEIRT_STRESS=full.
func harnessFixture(exp *encoderFixture) *encoderFixture {
	if stress.Full() {
		return exp
	}
	cut := &encoderFixture{}
	for _, i := range harnessSentences {
		cut.Sentences = append(cut.Sentences, exp.Sentences[i])
	}
	return cut
}

func openFixture(t *testing.T, name string) (string, *encoderFixture) {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "fixtures", name)
	// JEIRT_FIXTURES names the fixtures' folder where ../shared is not beside
	// the checkout (scripts/gpu-check.sh on the GPU machine); a fixture
	// missing there is a failure, not a skip.
	given := os.Getenv("JEIRT_FIXTURES")
	if given != "" {
		dir = filepath.Join(given, name)
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		if given != "" {
			t.Fatalf("%s fixture not found in JEIRT_FIXTURES: %v", name, err)
		}
		t.Skipf("%s fixture not found: %v", name, err)
	}
	var f encoderFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s/expected.json: %v", name, err)
	}
	return dir, &f
}

func maxDiff64(got []float32, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var w float64
	for k := range got {
		w = math.Max(w, math.Abs(float64(got[k])-want[k]))
	}
	return w
}

func maxDiff32(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var w float64
	for k := range a {
		w = math.Max(w, math.Abs(float64(a[k])-float64(b[k])))
	}
	return w
}

// TestHarnessEncoderFixtures runs the whole GPU forward (kernels/encoder.cu
// on the CPU harness, a host gemm for the dense products) on the three
// fixtures: token ids from the CPU encoder's tokenizer, pooled and
// normalised vectors within the fixtures' float32 tolerance of the float64
// references (2e-6, the tightest of the three READMEs), alone, in one
// length-sorted batch and in the padded batch, and within 1e-6 of the CPU
// encoder; the fingerprint is the CPU encoder's.
func TestHarnessEncoderFixtures(t *testing.T) {
	for _, name := range []string{"tiny-bert", "tiny-mpnet", "tiny-modernbert"} {
		t.Run(name, func(t *testing.T) {
			dir, exp := openFixture(t, name)
			cpu, err := encoder.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			dev, err := newEncoder(host, hostDense{}, cpu)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := dev.Close(); err != nil {
					t.Error(err)
				}
			}()
			if dev.Fingerprint() != cpu.Fingerprint() || dev.Dim() != cpu.Dim() {
				t.Fatalf("GPU encoder %s dim %d, CPU %s dim %d", dev.Fingerprint(), dev.Dim(), cpu.Fingerprint(), cpu.Dim())
			}
			exp = harnessFixture(exp)
			checkEncoderFixture(t, dev, cpu, exp, false)
			if m, ok := cpu.(*transformer.ModernBERT); ok && exp.Sentences[0].MeanNormalized != nil {
				// Mean pooling, as modernbert-embed pools.
				m.Pooling = []string{transformer.PoolMean}
				mean, err := newEncoder(host, hostDense{}, m)
				if err != nil {
					t.Fatal(err)
				}
				defer mean.Close()
				checkEncoderFixture(t, mean, m, exp, true)
			}
		})
	}
}

func checkEncoderFixture(t *testing.T, dev *Encoder, cpu encoder.Encoder, exp *encoderFixture, meanPooled bool) {
	t.Helper()
	const tol = 2e-6
	ctx := context.Background()
	texts := make([]string, len(exp.Sentences))
	for i, s := range exp.Sentences {
		texts[i] = s.Text
	}
	want := func(i int) []float64 {
		if meanPooled {
			return exp.Sentences[i].MeanNormalized
		}
		return exp.Sentences[i].PooledNormalized
	}
	all, err := dev.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := cpu.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var worstAlone, worstBatch, worstCPU float64
	for i := range texts {
		alone, err := dev.Encode(ctx, texts[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		worstAlone = math.Max(worstAlone, maxDiff64(alone[0], want(i)))
		worstBatch = math.Max(worstBatch, maxDiff64(all[i], want(i)))
		worstCPU = math.Max(worstCPU, maxDiff32(all[i], ref[i]))
	}
	what := "pooled_normalized"
	if meanPooled {
		what = "mean_normalized"
	}
	t.Logf("GPU forward on the harness: max |diff| %s alone %.2g, batch of %d %.2g; vs the CPU encoder %.2g", what, worstAlone, len(texts), worstBatch, worstCPU)
	if !(worstAlone <= tol && worstBatch <= tol) { // NaN fails too
		t.Errorf("%s off by %.3g alone, %.3g in a batch (want <= %g)", what, worstAlone, worstBatch, tol)
	}
	if !(worstCPU <= 1e-6) {
		t.Errorf("GPU and CPU vectors differ by %.3g (want <= 1e-6)", worstCPU)
	}
	if meanPooled || len(exp.PaddedBatch.SentenceIndices) == 0 { // none: cut by harnessFixture
		return
	}
	pb := exp.PaddedBatch
	var pbTexts []string
	for _, i := range pb.SentenceIndices {
		pbTexts = append(pbTexts, texts[i])
	}
	got, err := dev.Encode(ctx, pbTexts)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range pb.SentenceIndices {
		if d := maxDiff64(got[k], pb.PooledNormalized[k]); !(d <= tol) {
			t.Errorf("padded batch row %d (sentence %d) off by %.3g", k, i, d)
		}
	}
}

// TestHarnessEncoderPooling checks every pooling mode (CLS, max, mean,
// mean_sqrt_len, concatenated) with and without normalisation against the
// CPU encoder's pooling of the same model.
func TestHarnessEncoderPooling(t *testing.T) { checkEncoderPooling(t, host, hostDense{}) }

// checkEncoderPooling is TestHarnessEncoderPooling on device g with dense products mm.
func checkEncoderPooling(t *testing.T, g gpu.GPU, mm dense) {
	dir, exp := openFixture(t, "tiny-bert")
	cpu, err := transformer.OpenBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{exp.Sentences[0].Text, exp.Sentences[1].Text, exp.Sentences[2].Text}
	for _, norm := range []bool{false, true} {
		cpu.Pooling = []string{transformer.PoolCLS, transformer.PoolMax, transformer.PoolMean, transformer.PoolMeanSqrtLen}
		cpu.Normalize = norm
		dev, err := newEncoder(g, mm, cpu)
		if err != nil {
			t.Fatal(err)
		}
		got, err1 := dev.Encode(context.Background(), texts)
		want, err2 := cpu.Encode(context.Background(), texts)
		if err := gpu.FirstErr(err1, err2, dev.Close()); err != nil {
			t.Fatal(err)
		}
		if _, err := dev.Encode(context.Background(), texts); err == nil {
			t.Error("a closed GPU encoder encoded")
		}
		for i := range texts {
			if len(got[i]) != 4*32 {
				t.Fatalf("vector of %d, want 128", len(got[i]))
			}
			if d := maxDiff32(got[i], want[i]); !(d <= 1e-6) {
				t.Errorf("normalize %v: text %d differs from the CPU by %.3g", norm, i, d)
			}
		}
	}
}

// TestHarnessEncoderErrors: encoders without a GPU forward and heads too
// large for the attention kernel are refused with a clear error.
func TestHarnessEncoderErrors(t *testing.T) {
	hash, err := encoder.Open("hash:16")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newEncoder(host, hostDense{}, hash); err == nil {
		t.Error("a hash encoder got a GPU forward")
	}
	w := &transformer.Weights{Arch: "bert", Hidden: 512, Heads: 2, Pooling: []string{transformer.PoolMean}}
	if _, err := newEncoderForward(host, hostDense{}, w); err == nil {
		t.Error("head size 256 was accepted")
	}
}

// TestHarnessAttention checks the attention kernels against a float64
// reference at head sizes the fixtures do not reach: 32, 64, 96 and 128 (one
// per kernel, each its capacity) and 8 and 80 (zero-padded to 32 and 96), on
// a length that fills no tile (75 tokens: 5 row blocks, 3 key tiles), a
// fused QKV layout, padding, a relative bias and a window (with padded
// queries whose window holds no real key: zeros, as on the CPU).
func TestHarnessAttention(t *testing.T) { checkAttention(t, host) }

// checkAttention is TestHarnessAttention on device g.
func checkAttention(t *testing.T, g gpu.GPU) {
	rng := rand.New(rand.NewPCG(5, 6))
	const b, l, heads = 2, 75, 2
	for _, c := range []struct {
		dh, window int
		bias       bool
	}{{64, 0, true}, {128, 0, false}, {64, 20, false}, {32, 0, true}, {96, 20, true}, {128, 10, true}, {8, 0, false}, {80, 20, true}} {
		d := heads * c.dh
		ld := 3 * d
		qkv := make([]float32, b*l*ld)
		for i := range qkv {
			qkv[i] = float32(rng.NormFloat64())
		}
		mask := make([]float32, b*l)
		for i := range mask {
			if i < l || i%l < 50 { // the second text is 50 tokens, padded to 75
				mask[i] = 1
			}
		}
		var bias []float32
		if c.bias {
			bias = make([]float32, heads*l*l)
			for i := range bias {
				bias[i] = float32(rng.NormFloat64())
			}
		}
		scale := math.Sqrt(float64(c.dh))
		got := make([]float32, b*l*d)
		bufs := gpu.Buffers{G: g}
		err := g.Do(func() error {
			hq, hm, hc := bufs.Alloc("qkv", len(qkv), 4), bufs.Alloc("mask", len(mask), 4), bufs.Alloc("ctx", len(got), 4)
			hb := gpu.Handle(0)
			if bias != nil {
				hb = bufs.Alloc("bias", len(bias), 4)
			}
			if bufs.Err != nil {
				return bufs.Err
			}
			if err := gpu.FirstErr(g.HtoD(hq, qkv), g.HtoD(hm, mask)); err != nil {
				return err
			}
			if bias != nil {
				if err := g.HtoD(hb, bias); err != nil {
					return err
				}
			}
			f := &encoderForward{g: g, w: &transformer.Weights{Hidden: d, Heads: heads}, mask: hm, ctx: hc}
			return gpu.FirstErr(f.attention(hq, hq+gpu.Handle(4*d), hq+gpu.Handle(8*d), ld, b, l, hb, c.window), g.DtoH(got, hc), bufs.Free())
		})
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for bi := range b {
			for h := range heads {
				for i := range l {
					var p []float64
					var sum, m float64 = 0, math.Inf(-1)
					for j := range l {
						x := math.Inf(-1)
						if mask[bi*l+j] != 0 && (c.window == 0 || abs(i-j) <= c.window) {
							x = 0
							for k := range c.dh {
								x += float64(qkv[(bi*l+i)*ld+h*c.dh+k]) * float64(qkv[(bi*l+j)*ld+d+h*c.dh+k])
							}
							x /= scale
							if bias != nil {
								x += float64(bias[(h*l+i)*l+j])
							}
						}
						p = append(p, x)
						m = math.Max(m, x)
					}
					for j := range p {
						if math.IsInf(m, -1) { // no key in reach: zeros, as on the CPU
							p[j] = 0
							continue
						}
						p[j] = math.Exp(p[j] - m)
						sum += p[j]
					}
					sum = math.Max(sum, 1e-300)
					for k := range c.dh {
						var want float64
						for j := range p {
							want += p[j] / sum * float64(qkv[(bi*l+j)*ld+2*d+h*c.dh+k])
						}
						worst = math.Max(worst, math.Abs(float64(got[(bi*l+i)*d+h*c.dh+k])-want))
					}
				}
			}
		}
		t.Logf("head size %d (%s), window %d, bias %v: max |diff| %.2g", c.dh, attentionKernel(c.dh), c.window, c.bias, worst)
		if !(worst <= 1e-5) {
			t.Errorf("head size %d, window %d: attention off by %.3g", c.dh, c.window, worst)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
