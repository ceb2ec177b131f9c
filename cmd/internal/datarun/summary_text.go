package datarun

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/jeirt/jeirt/model/read"
)

// WriteText prints the summary as jeirt data inspect does: one labelled
// line per figure.
func (s Summary) WriteText(w io.Writer) error {
	s.writeDecision(w)
	fmt.Fprintf(w, "models        %d\n", s.Models)
	fmt.Fprintf(w, "items         %d", s.Items)
	if s.ItemsWithText > 0 {
		fmt.Fprintf(w, " (%d with text)", s.ItemsWithText)
	}
	if s.Groups > 0 {
		fmt.Fprintf(w, " in %d groups", s.Groups)
	}
	fmt.Fprintln(w)
	if s.ItemsFile != "" {
		fmt.Fprintf(w, "item text     column %s of %s\n", s.ItemTextColumn, s.ItemsFile)
	}
	fmt.Fprintf(w, "observed      %d of %d cells (density %.4f)\n", s.Observed, s.Models*s.Items, s.Density)
	fmt.Fprintf(w, "mean correct  %.4f\n", s.MeanCorrect)
	if s.TrialsMax <= 1 {
		fmt.Fprintf(w, "trials        1 per cell\n")
	} else {
		fmt.Fprintf(w, "trials        %.2f per cell (min %d, max %d), %d in all\n", s.TrialsMean, s.TrialsMin, s.TrialsMax, s.Trials)
	}
	if s.GradedCells == 0 {
		fmt.Fprintf(w, "graded        0 cells with a fractional score")
	} else {
		fmt.Fprintf(w, "graded        %d cells (%.4f) with a fractional score", s.GradedCells, s.GradedShare)
	}
	switch {
	case s.ScoreLevels > 1000:
		fmt.Fprintf(w, ", more than 1000 distinct scores")
	case s.ScoreLevels > 0:
		fmt.Fprintf(w, ", %d distinct scores", s.ScoreLevels)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "model acc.    min %.4f (%s), median %.4f, max %.4f (%s)\n",
		s.ModelAccMin, s.ModelAccMinBy, s.ModelAccMedian, s.ModelAccMax, s.ModelAccMaxBy)
	if s.ModelsNoCells > 0 {
		fmt.Fprintf(w, "              %d models have no observed cell\n", s.ModelsNoCells)
	}
	fmt.Fprintf(w, "items         %d solved by nobody, %d by everybody, %d never observed\n", s.ItemsNobody, s.ItemsEveryone, s.ItemsNoCells)
	fmt.Fprintf(w, "blank cells   %d\n", s.Blank)
	_, err := fmt.Fprintf(w, "duplicates    %d cells with %d extra rows; %d conflicting, %d ties left missing\n",
		s.DuplicateCells, s.DuplicateRows, s.Conflicts, s.TiesDropped)
	if s.Warning != "" {
		_, err = fmt.Fprintf(w, "warning       %s\n", s.Warning)
	}
	if s.Logs != nil && err == nil {
		_, err = io.WriteString(w, "logs read:\n"+s.Logs.String())
	}
	if s.MDB != nil && err == nil {
		_, err = io.WriteString(w, s.MDB.String())
	}
	return err
}

// FailedRead prints, before a failed read's error, what the read had
// decided and found: the file and its format (WriteDecision; text output
// only), or a measurement-db tree's benchmarks and conditions (WriteFound),
// so that the error's choice can be made. It returns err, or the error of
// writing the listing.
func FailedRead(w io.Writer, rep *read.Report, asJSON bool, err error) error {
	if rep != nil && rep.MDB != nil && len(rep.MDB.Benchmarks) > 0 {
		if werr := WriteFound(w, rep); werr != nil {
			return werr
		}
		return err
	}
	if !asJSON {
		WriteDecision(w, rep)
	}
	return err
}

// WriteFound prints what a read that failed found, when it found
// something worth listing (the benchmarks and conditions of a
// measurement-db tree, for one), so that the error's choice can be made;
// it prints nothing otherwise.
func WriteFound(w io.Writer, rep *read.Report) error {
	if rep == nil || rep.MDB == nil || len(rep.MDB.Benchmarks) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "file          %s\nformat        %s (%s)\n%s", rep.Path, rep.Format, rep.Why, rep.MDB.String())
	return err
}

// WriteJSON writes the summary as indented JSON; accuracies that are NaN (no
// observed cells) are written as -1, which JSON can carry.
func (s Summary) WriteJSON(w io.Writer) error {
	for _, p := range []*float64{&s.ModelAccMin, &s.ModelAccMedian, &s.ModelAccMax} {
		if math.IsNaN(*p) {
			*p = -1
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteDecision prints the file and format lines of a file that failed to
// read, when the reader got as far as deciding its format (rep.Format), so
// that what was guessed is seen beside the error; it reports whether it
// printed them.
func WriteDecision(w io.Writer, rep *read.Report) bool {
	if rep == nil || rep.Format == "" {
		return false
	}
	Summary{File: rep.Path, Format: rep.Format, Decided: rep.Why, Gzip: rep.Gzip}.writeDecision(w)
	return true
}

func (s Summary) writeDecision(w io.Writer) {
	gz := ""
	if s.Gzip {
		gz = ", gzip"
	}
	fmt.Fprintf(w, "file          %s\n", s.File)
	fmt.Fprintf(w, "format        %s%s (%s)\n", s.Format, gz, s.Decided)
}
