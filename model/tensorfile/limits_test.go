package tensorfile

import (
	"encoding/binary"
	"strings"
	"testing"
)

// A safetensors header is at most 100 MiB, even when the file is larger.
func TestSafetensorsHeaderLimit(t *testing.T) {
	b := make([]byte, 8+maxSafetensorsHeader+16)
	binary.LittleEndian.PutUint64(b, maxSafetensorsHeader+1)
	_, err := ParseSafetensors("big.safetensors", b)
	if err == nil || !strings.Contains(err.Error(), "big.safetensors: safetensors header length 104857601") {
		t.Fatalf("got %v", err)
	}
}
