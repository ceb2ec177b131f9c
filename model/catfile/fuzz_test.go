package catfile

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadFiles feeds the same bytes to every reader of the package: each
// gives rows with rank values where it says so, or a short error.
func FuzzReadFiles(f *testing.F) {
	f.Add([]byte("model,theta,se,items_used,stop\nm,0.5,0.25,3,budget\n"), 1)
	f.Add([]byte("model,theta_1,theta_2,se_1,se_2,items_used,stop,theta_full_1,theta_full_2,se_full_1,se_full_2,items_full\nm,1,2,0.1,0.2,3,,1,2,0.1,0.2,9\n"), 2)
	f.Add([]byte("model,step,item,group,answer,value,theta,se\nm,0,,,,,0,1\nm,1,q,g,1,0.25,0.5,0.8\n"), 1)
	f.Add([]byte("model,rank,item,group,value,p_correct\nm,1,q,,0.5,0.25\n"), 1)
	f.Add([]byte("item,category\nq1,a\n"), 1)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body []byte, rank int) {
		if rank < 1 || rank > 4 {
			return
		}
		p := filepath.Join(dir, "f.csv")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		short := func(err error) {
			if err != nil && len(err.Error()) > 4096 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		}
		ab, err := ReadAbilities(p, rank)
		short(err)
		for _, a := range ab {
			if err == nil && (len(a.Theta) != rank || len(a.SE) != rank || a.ThetaFull != nil && len(a.ThetaFull) != rank) {
				t.Fatalf("ability row %+v at rank %d", a, rank)
			}
		}
		tr, err := ReadTrace(p, rank)
		short(err)
		for _, s := range tr {
			if err == nil && (len(s.Theta) != rank || len(s.SE) != rank) {
				t.Fatalf("trace row %+v at rank %d", s, rank)
			}
		}
		_, err = ReadNext(p)
		short(err)
		_, err = ReadGroups(p, "")
		short(err)
	})
}
