package model

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	b, err := json.Marshal([]Float{1.5, Float(math.NaN()), 1e-7})
	if err != nil || string(b) != "[1.5,null,1e-7]" {
		t.Fatalf("%s %v", b, err)
	}
	var back []Float
	if err := json.Unmarshal(b, &back); err != nil || back[0] != 1.5 || !math.IsNaN(float64(back[1])) || back[2] != 1e-7 {
		t.Errorf("%v %v", back, err)
	}
}
