//go:build !linux && !darwin

package transformer

import "github.com/jeirt/jeirt/model"

// mapSafetensors is not available here; ReadSafetensors is used.
func mapSafetensors(path string) (*model.Safetensors, bool, error) { return nil, false, nil }
