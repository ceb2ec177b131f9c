package model

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

// A domain reference's threshold must be finite and its quantile in [0, 1].
func TestParseDomainLimits(t *testing.T) {
	for _, meta := range []string{`"threshold":"+Inf","quantile":"0.95"`, `"threshold":"0.3","quantile":"2"`} {
		b := safetensorsBytes(`{"reference":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"__metadata__":{`+meta+`}}`, 4)
		if _, err := ParseDomain("domain.safetensors", b); err == nil || !strings.Contains(err.Error(), "domain.safetensors: metadata") {
			t.Errorf("%s: got %v", meta, err)
		}
	}
}
