//go:build !linux && !darwin

package tensorfile

// MapSafetensors is not available here; ReadSafetensors is used.
func MapSafetensors(path string) (*Safetensors, bool, error) { return nil, false, nil }
