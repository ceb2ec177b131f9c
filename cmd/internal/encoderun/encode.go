package encoderun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/backend"
)

// EncodeFile is jeirt encode: it encodes the texts of an items file (or a
// text file, one text per line) and writes the vectors. The zero value
// needs Items and Out.
type EncodeFile struct {
	Spec  string // encoder spec (Open); "" is hash
	Items string // items CSV or text file (ReadTexts)
	Out   string // .npy, .safetensors or .jsonl (WriteVectors)
	Shard string // "i/n": encode items i, i+n, ... only ("": all)
	Cache string // folder caching vectors by encoder, id and text ("": none)
	Batch int    // texts per forward pass (0: 64)
	Log   progress.Logf
	// Device is the resolved device (backend.Resolve) the forward pass of a
	// model folder runs on: on cuda, the GPU, with the same vectors and
	// fingerprint; "" is the CPU.
	Device string
	// Precision is the GPU forward's linear layers: fp32 ("" means it), or
	// tf32 or bf16 on tensor cores (vectors with their own fingerprint).
	Precision string
	// Emit "slurm" writes, instead of encoding here, the job folder Out:
	// a Slurm array of Shards shard tasks and the merge job that waits on
	// them (EmitSlurm); Submit also submits them. Stdout gets what the
	// user acts on next.
	Emit   string
	Shards int
	Submit bool
	Force  bool // with Emit, replace the job folder Out (only when jeirt wrote it)
	Stdout io.Writer
}

// onDevice is enc with its forward pass on e.Device at e.Precision.
func (e EncodeFile) onDevice(enc encoder.Encoder) (encoder.Encoder, error) {
	on, err := backend.EncoderOn(e.Device, enc)
	if err != nil {
		return nil, err
	}
	if e.Precision != "fp32" {
		// The GPU encoder's linear layers on tensor cores; its
		// fingerprint (and so its cache entries) says so.
		p, ok := on.(interface{ SetPrecision(string) error })
		if !ok {
			return nil, model.FieldErrorf("Precision", "encode: {Precision} %s needs the encoder's forward pass on the GPU ({Device} cuda and a model folder)", e.Precision)
		}
		if err := p.SetPrecision(e.Precision); err != nil {
			return nil, err
		}
	}
	return on.(encoder.Encoder), nil
}

// Run encodes and writes, with progress lines on Log.
func (e EncodeFile) Run(ctx context.Context) error {
	log := e.Log
	if e.Emit != "" {
		return e.EmitSlurm(ctx)
	}
	start := time.Now() // the time printed at the end is the whole run's
	if e.Shards != 0 || e.Submit {
		return model.FieldErrorf("Emit", "encode: {Shards} and {Submit} go with {Emit} slurm (here, {Shard} i/n encodes one shard)")
	}
	if e.Batch < 0 {
		return model.FieldErrorf("Batch", "encode: {Batch} %d: want a positive number of texts per forward pass (default 64)", e.Batch)
	}
	if e.Batch == 0 {
		e.Batch = 64
	}
	if e.Spec == "" {
		e.Spec = "hash"
	}
	if e.Precision == "" {
		e.Precision = "fp32"
	}
	if e.Precision != "fp32" && e.Precision != "tf32" && e.Precision != "bf16" {
		return model.FieldErrorf("Precision", "encode: {Precision} %q: want fp32, tf32 or bf16", e.Precision)
	}
	shard, nShards, err := ParseShard(e.Shard)
	if err != nil {
		return err
	}
	enc, err := encoder.Open(e.Spec)
	if err != nil {
		return err
	}
	if e.Device != "" {
		on, err := e.onDevice(enc)
		if err != nil {
			return err
		}
		if on != enc {
			how := ""
			if d, ok := on.(interface{ DenseProducts() string }); ok {
				how = "; linear layers on " + d.DenseProducts()
			}
			log.Printf("encode: forward pass on the GPU%s", how)
		}
		enc = on
	}
	if b, ok := enc.(interface{ SetBatchSize(int) }); ok {
		b.SetBatchSize(e.Batch)
	}
	ids, texts, err := encoder.ReadTexts(e.Items)
	if err != nil {
		return err
	}
	if f, ok := enc.(encoder.Fitter); ok {
		// Fitted on every input text before sharding, so all shards agree.
		log.Printf("encode: fitting %s on %d texts", e.Spec, len(texts))
		fitStart := time.Now()
		if t, ok := f.(*encoder.TFIDF); ok {
			t.Progress = fitProgress(log, fitStart)
		}
		if err := f.Fit(ctx, texts); err != nil {
			return err
		}
		log.Printf("encode: fitted %s in %s", e.Spec, time.Since(fitStart).Round(time.Millisecond))
	}
	if nShards > 1 {
		var sid, stext []string
		for i := shard; i < len(ids); i += nShards {
			sid, stext = append(sid, ids[i]), append(stext, texts[i])
		}
		ids, texts = sid, stext
	}
	var cache *encoder.Cache
	if e.Cache != "" {
		cache = &encoder.Cache{Dir: e.Cache}
	}
	log.Printf("encode: %d items with %s (dim %d)", len(ids), enc.Fingerprint(), enc.Dim())
	encStart := time.Now()
	last := encStart
	vecs, err := encoder.EncodeItems(ctx, enc, ids, texts, encoder.ItemOptions{
		Cache: cache,
		Chunk: max(e.Batch*4, 64),
		Progress: func(done, total int) {
			if now := time.Now(); now.Sub(last) > 2*time.Second || done == total {
				last = now
				rate := float64(done) / now.Sub(encStart).Seconds()
				log.Printf("encode: %d/%d items (%.0f/s, ETA %s)", done, total, rate, time.Duration(float64(total-done)/max(rate, 1e-9)*float64(time.Second)).Round(time.Second))
			}
		},
	})
	if errors.Is(err, encoder.ErrNonFinite) {
		return fmt.Errorf("encode --encoder %s: %w", e.Spec, err)
	}
	if err != nil {
		return err
	}
	meta := map[string]string{"encoder": enc.Fingerprint()}
	if nShards > 1 {
		meta["shard"] = e.Shard
	}
	if err := encoder.WriteVectors(e.Out, &encoder.Vectors{IDs: ids, Rows: vecs, Dim: enc.Dim()}, meta); err != nil {
		return err
	}
	log.Printf("encode: wrote %s (%d × %d) in %s", e.Out, len(ids), enc.Dim(), time.Since(start).Round(time.Millisecond))
	return nil
}

// fitProgress reports a TF-IDF fit's steps on log as the encoding's
// progress is reported: a line when a step ends, and one every 2 seconds
// within a long one.
func fitProgress(log progress.Logf, start time.Time) func(step string, done, total int) {
	names := map[string]string{"terms": "counting terms", "rows": "weighting texts", "svd": "truncated SVD"}
	units := map[string]string{"terms": "texts", "rows": "texts", "svd": "products"}
	last := start
	return func(step string, done, total int) {
		if now := time.Now(); now.Sub(last) > 2*time.Second || done == total {
			last = now
			log.Printf("encode: fit: %s %d/%d %s", names[step], done, total, units[step])
		}
	}
}

// MergeFiles joins the shard files of EncodeFile (given in order 0..n-1)
// into out (MergeShards); items, when not "", orders the rows by the ids of
// that items file instead. It returns the merged vectors.
func MergeFiles(paths []string, items, out string) (*encoder.Vectors, error) {
	shards := make([]*encoder.Vectors, len(paths))
	for i, p := range paths {
		v, err := encoder.ReadVectors(p)
		if err != nil {
			return nil, err
		}
		shards[i] = v
	}
	var order []string
	if items != "" {
		var err error
		if order, _, err = encoder.ReadTexts(items); err != nil {
			return nil, err
		}
	}
	v, err := encoder.MergeShards(shards, paths, order, items)
	if err != nil {
		return nil, err
	}
	return v, encoder.WriteVectors(out, v, nil)
}

// ParseShard reads "i/n" (0 <= i < n); "" means the whole input (0, 1).
func ParseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, model.FieldErrorf("Shard", "encode: {Shard} %q: want i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return i, n, nil
}
