// Package backend is the seam between the training code and the devices it
// runs on: the interfaces of the hot loops (a batched cBMM iteration,
// CBMMDevice and CBMMBatch; a JE-IRT training step, NewJEIRTStepper and
// JEIRTStepper; an encoder forward, Encoders), one device string resolved
// once per run (Resolve: cpu, cpu:fused, cuda or auto), one registry
// (Register, Lookup) with one rule for "auto", and the small host solves that
// the CPU and CUDA implementations share so that they do the same arithmetic.
//
// The CPU implementations register themselves from train/irt and train/jeirt;
// package cuda registers device "cuda" only in a binary built with
// -tags jeirtcuda. Nothing here imports either.
package backend
