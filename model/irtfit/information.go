package irtfit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/csvtable"
)

// InformationColumns are information.csv's columns.
var InformationColumns = []string{"theta", "information", "se"}

// WriteInformation writes information.csv: one row per θ of the grid, the
// test information there and the standard error of θ, 1/√I(θ) (empty
// where I is 0).
func WriteInformation(w io.Writer, pts []InformationPoint) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(InformationColumns); err != nil {
		return err
	}
	for _, p := range pts {
		if err := cw.Write([]string{model.FormatFloat(p.Theta), model.FormatFloat(p.Information), model.FormatFloat(p.SE)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// readInformation reads information.csv; nil, nil when the folder has none
// (rank > 1, folders written before it).
func readInformation(path string) ([]InformationPoint, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var out []InformationPoint
	err := csvtable.Read(path, func(get csvtable.Row) error {
		p := InformationPoint{Theta: get.Num("theta"), Information: get.Num("information"), SE: get.OptNum("se")}
		if err := get.Err(); err != nil {
			return err
		}
		if !(p.Information >= 0) || math.IsInf(p.Information, 0) {
			return fmt.Errorf("%s:%d: column \"information\": %v is not a finite information (0 or more)", path, len(out)+2, p.Information)
		}
		out = append(out, p)
		return nil
	})
	return out, err
}
