// Package cuda runs jeirt's hot loops on NVIDIA GPUs through gorgonia.org/cu.
// Everything that touches the GPU is behind the cuda build tag; the default
// build of this package is empty, so it runs everywhere.
package cuda
