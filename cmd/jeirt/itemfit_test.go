package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// On the shipped SWE-bench fit every item's outfit and infit ZSTD has the
// sign of its mean square minus 1 (116 of 500 items had outfit < 1 with
// outfit_zstd > 2, up to 3,733), and misfit is flagged exactly where a
// mean square is outside 0.5-1.5 with its ZSTD beyond ±2 on the same side,
// as docs/irt.md states.
func TestItemFitOnSWEBench(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fit")
	if _, log, err := runSplit(t, newIRTCmd(), "fit", "--data", "../../configs/data/swebench-verified/response_matrix.csv", "--out", out); err != nil {
		t.Fatal(err, log)
	}
	rows := readCSVFile(t, filepath.Join(out, "items.csv"))
	col := map[string]int{}
	for k, h := range rows[0] {
		col[h] = k
	}
	judged := 0
	for _, row := range rows[1:] {
		get := func(name string) float64 {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil {
				t.Fatalf("item %s: %s %q: %v", row[0], name, row[col[name]], err)
			}
			return v
		}
		if row[col["outfit"]] == "" {
			continue
		}
		judged++
		in, inZ, outf, outZ := get("infit"), get("infit_zstd"), get("outfit"), get("outfit_zstd")
		for _, st := range []struct {
			name  string
			ms, z float64
		}{{"infit", in, inZ}, {"outfit", outf, outZ}} {
			if (st.ms < 1) != (st.z < 0) && st.ms != 1 {
				t.Errorf("item %s: %s %.3f with ZSTD %+.2f", row[0], st.name, st.ms, st.z)
			}
		}
		beyond := func(ms, z float64) bool { return ms > 1.5 && z > 2 || ms < 0.5 && z < -2 }
		misfit := strings.Contains(";"+row[col["flag"]]+";", ";misfit;")
		if misfit != (beyond(in, inZ) || beyond(outf, outZ)) {
			t.Errorf("item %s: infit %.3f (%+.2f), outfit %.3f (%+.2f), flag %q", row[0], in, inZ, outf, outZ, row[col["flag"]])
		}
	}
	if judged < 400 {
		t.Errorf("%d items judged, want the 468 answered both ways", judged)
	}
}
