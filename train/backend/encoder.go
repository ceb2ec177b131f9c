package backend

import "context"

// TextEncoder is a frozen text encoder (the method set of encoder.Encoder,
// restated so that this package imports no encoder code).
type TextEncoder interface {
	Dim() int
	Fingerprint() string
	Encode(ctx context.Context, texts []string) ([][]float32, error)
}

// Encoders is the text encoder seam: a device that runs encoders' forward
// passes.
type Encoders interface {
	// OnDevice returns enc with its forward pass on the device: the same
	// Dim, Fingerprint and tokens, and vectors equal to the CPU's within
	// float32 rounding, so one encoder cache serves both. ok is false when
	// the device has no forward for enc's kind (the caller keeps enc).
	OnDevice(enc TextEncoder) (onDevice TextEncoder, ok bool, err error)
}

// EncoderOn returns enc running on device (a resolved device, or "auto"): enc itself on
// the CPU, on a device without the Encoders seam, or for an encoder kind the
// device does not run (hash, precomputed, TF-IDF).
func EncoderOn(device string, enc TextEncoder) (TextEncoder, error) {
	_, name, err := Lookup[any](device)
	if err != nil {
		return nil, err
	}
	if registryName(name) == CPU {
		return enc, nil
	}
	e, _, err := Lookup[Encoders](name)
	if err != nil {
		return enc, nil
	}
	on, ok, err := e.OnDevice(enc)
	if err != nil {
		return nil, err
	}
	if !ok {
		return enc, nil
	}
	return on, nil
}
