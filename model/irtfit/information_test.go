package irtfit

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A bad cell of information.csv or of abilities.csv's person-fit columns
// is an error naming the file, the line and the column.
func TestReadBadInformationAndPersonFit(t *testing.T) {
	nan := math.NaN()
	f := &Folder{Doc: Doc{Settings: Settings{Method: "cbmm", Rank: 1, Sigma: 1}, Models: 1, Items: 1, LossHistory: []float64{1}},
		Models:      []Model{{Name: "m", Theta: []float64{0.5}, SE: []float64{nan}, Lo: []float64{nan}, Hi: []float64{nan}, Score: 0.5, Rank: 1, Accuracy: 1, AccuracyRank: 1}},
		Items:       []Item{{ID: "q", A: []float64{1}, SEA: []float64{nan}}},
		Information: []InformationPoint{{Theta: 0, Information: 0.25, SE: 2}}}
	for _, tc := range []struct{ file, text, want string }{
		{"information.csv", "theta,information,se\n0,0.25,2\n1,x,2\n", `information.csv:3: column "information": "x" is not a number`},
		{"information.csv", "theta,information,se\n0,-0.25,2\n", `information.csv:2: column "information": -0.25 is not a finite information (0 or more)`},
		{"abilities.csv", "model,theta,rank,accuracy,accuracy_rank,lz_star,infit,outfit\nm,0.5,1,1,1,low,1,1\n", `abilities.csv:2: column "lz_star": "low" is not a number`},
	} {
		dir := t.TempDir()
		if err := Write(dir, f); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.text), 0o644)
		_, err := Read(dir)
		if want := filepath.Join(dir, tc.want); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", tc.file, err, want)
		}
	}
}
