package main

import (
	"os"
	"regexp"
	"testing"
)

// encode --encoder tfidf says it is fitting, and how far the fit is, before
// it encodes; its last line times the whole run.
func TestEncodeTFIDFShowsFit(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("items.csv", []byte("item_id,text\na,alpha beta\nb,beta gamma\nc,gamma delta\n"), 0o644)
	_, log, err := runSplit(t, newEncodeCmd(), "--items", "items.csv", "--encoder", "tfidf", "--out", "v.npy")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^encode: fitting tfidf on 3 texts
encode: fit: counting terms 3/3 texts
encode: fit: weighting texts 3/3 texts
encode: fit: truncated SVD 7/7 products
encode: fitted tfidf in [0-9.]+[mµn]?s
encode: 3 items with tfidf/\S+ \(dim 2\)
(encode: .*\n)*encode: wrote v.npy \(3 × 2\) in [0-9.]+[mµn]?s
$`)
	if !want.MatchString(log) {
		t.Errorf("log:\n%s", log)
	}
}
