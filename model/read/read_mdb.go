package read

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/mdb"
)

// MDBFormat is the format of measurement-db trees (package mdb).
const MDBFormat = mdb.Format

// readMDB reads a measurement-db tree, data set or responses file (package
// mdb), and joins item texts from opt.Items over those of its items table.
func readMDB(path string, opt Options, rep *Report) (*model.Responses, *Report, error) {
	rep.Format = MDBFormat
	if opt.Format == MDBFormat {
		rep.Why = "given by --format"
	} else {
		rep.Why = "measurement-db tables (a registry of subjects, items and benchmarks, and responses.parquet)"
	}
	r, res, err := mdb.Read(path, mdb.Options{Benchmark: opt.Benchmark, Condition: opt.Condition, ScoreMap: opt.ScoreMap})
	rep.MDB, rep.Rows = res.Summary, res.Rows
	t := res.Tally
	rep.Blank, rep.DuplicateCells, rep.DuplicateRows, rep.Conflicts = t.Blank, t.DuplicateCells, t.DuplicateRows, t.Conflicts
	if res.ItemTexts > 0 {
		rep.ItemsPath, rep.ItemTextColumn, rep.ItemTexts = res.ItemsPath, "content", res.ItemTexts
	}
	if err != nil {
		return nil, rep, err
	}
	if err := checkUTF8(path, r); err != nil {
		return nil, rep, err
	}
	if opt.Items != "" {
		if err := joinItemText(r, opt.Items, rep); err != nil {
			return nil, rep, err
		}
	}
	return r, rep, nil
}
