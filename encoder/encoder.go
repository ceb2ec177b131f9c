// Package encoder turns question text into vectors: it parses encoder specs
// (Open, OpenRecorded) and holds the weightless hash encoder, TF-IDF,
// precomputed vectors, the embedding cache and the Hugging Face cache
// resolver. The transformer encoders live in encoder/transformer, their
// tokenizers in encoder/tokenizer.
package encoder

import "context"

// Encoder maps texts to fixed-size float32 vectors.
type Encoder interface {
	// Dim is the length of every vector Encode returns.
	Dim() int
	// Fingerprint identifies the encoder kind, its weights and its settings;
	// changing any of them changes the fingerprint.
	Fingerprint() string
	// Encode returns one vector per text, in order. It honours ctx cancellation.
	Encode(ctx context.Context, texts []string) ([][]float32, error)
}
