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

// On k of n trials, ScoreFractions' log loss is the per-trial log loss of
// the same trials as n 0/1 rows; accuracy is per cell of the rounded
// outcome (k/n ≥ ½); on 0/1 cells it is Score.
func TestScoreFractions(t *testing.T) {
	p := []float64{0.9, 0.2, 0.6, 0.5}
	k, n := []float64{3, 0, 1, 2}, []float64{4, 2, 3, 4}
	frac := make([]float64, len(p))
	var ep []float64
	var ey []uint8
	for i := range p {
		frac[i] = k[i] / n[i]
		for s := 0; s < int(n[i]); s++ {
			ep = append(ep, p[i])
			ey = append(ey, map[bool]uint8{true: 1, false: 0}[float64(s) < k[i]])
		}
	}
	got, rows := ScoreFractions(p, frac, n), Score(ep, ey)
	if math.Abs(got.LogLoss-rows.LogLoss) > 1e-15 {
		t.Errorf("log loss %v, per trial %v", got.LogLoss, rows.LogLoss)
	}
	// Rounded outcomes 1, 0, 0, 1 against predictions 1, 0, 1, 1: 3 of 4.
	if got.Accuracy != 0.75 || got.N != 4 {
		t.Errorf("accuracy %v of %d cells, want 0.75 of 4", got.Accuracy, got.N)
	}
	y := []uint8{1, 0, 1, 1}
	a, b := Score(p, y), ScoreFractions(p, []float64{1, 0, 1, 1}, nil)
	if a != b {
		t.Errorf("Score %+v, ScoreFractions on 0/1 %+v", a, b)
	}
}
