// Package encoder turns question text into vectors: a Hugging Face-exact
// tokenizer, BERT-family sentence encoders run as Gorgonia graphs, a weightless
// hash encoder, precomputed vectors and an embedding cache.
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
