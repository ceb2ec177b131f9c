package eval

import (
	"math"
	"testing"
)

func TestScoreKnownValues(t *testing.T) {
	p := []float64{0.9, 0.2, 0.6, 0.4}
	y := []uint8{1, 0, 0, 1}
	m := Score(p, y)
	if m.Accuracy != 0.5 {
		t.Errorf("accuracy %v, want 0.5", m.Accuracy)
	}
	// pairs (pos, neg): (0.9,0.2) (0.9,0.6) (0.4,0.2) win, (0.4,0.6) loses: 3/4.
	if m.AUC != 0.75 {
		t.Errorf("AUC %v, want 0.75", m.AUC)
	}
	wantLL := -(math.Log(0.9) + math.Log(0.8) + math.Log(0.4) + math.Log(0.4)) / 4
	if math.Abs(m.LogLoss-wantLL) > 1e-12 {
		t.Errorf("log loss %v, want %v", m.LogLoss, wantLL)
	}
	wantBrier := (0.01 + 0.04 + 0.36 + 0.36) / 4
	if math.Abs(m.Brier-wantBrier) > 1e-12 {
		t.Errorf("Brier %v, want %v", m.Brier, wantBrier)
	}
	// bins: 0.2 -> bin 2 (p .2, y 0), 0.4 -> bin 4 (.4, 1), 0.6 -> bin 6 (.6, 0), 0.9 -> bin 9 (.9, 1)
	wantECE := (0.2 + 0.6 + 0.6 + 0.1) / 4
	if math.Abs(m.ECE-wantECE) > 1e-12 {
		t.Errorf("ECE %v, want %v", m.ECE, wantECE)
	}
}

func TestAUCTiesAndOneClass(t *testing.T) {
	if got := AUC([]float64{0.5, 0.5}, []uint8{1, 0}); got != 0.5 {
		t.Errorf("tied AUC %v, want 0.5", got)
	}
	if got := AUC([]float64{0.1, 0.9}, []uint8{1, 1}); !math.IsNaN(got) {
		t.Errorf("one-class AUC %v, want NaN", got)
	}
}

// The AUC loop compared NaN scores with == and never ended.
func TestAUCNaNTerminates(t *testing.T) {
	nan := math.NaN()
	for _, p := range [][]float64{{nan, nan, nan}, {0.2, nan, 0.9}, {nan}} {
		y := make([]uint8, len(p))
		y[0] = 1
		if a := AUC(p, y); !math.IsNaN(a) {
			t.Errorf("AUC(%v) = %v, want NaN", p, a)
		}
	}
	if a := AUC([]float64{0.1, 0.9, 0.9}, []uint8{0, 1, 0}); a != 0.75 {
		t.Errorf("AUC with a tie = %v, want 0.75", a)
	}
}
