// Package tensorfile reads and writes tensor files: safetensors (read whole,
// or mapped in place when every tensor is float32, through one header
// validator) and NumPy .npy matrices.
package tensorfile
