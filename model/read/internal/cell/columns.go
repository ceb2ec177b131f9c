package cell

import (
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/model/limits"
)

// Column names of the layouts, compared case-insensitively, in order of
// preference.
var (
	ModelNames = []string{"model", "model_name", "model_id", "subject_id"}
	ItemNames  = []string{"item", "item_id", "prompt_id", "question_id"}
	LabelNames = []string{"correct", "label", "y", "response"}
	// A long file of cells with several trials: successes and trials
	// columns (without a successes column, the label column counts them).
	SuccessNames = []string{"successes", "k", "n_correct", "num_correct"}
	TrialNames   = []string{"trials", "n", "n_trials", "num_trials", "attempts", "samples"}
	// The label column of a long file of graded scores, and the successes
	// column of one with trials and graded successes: the names jeirt
	// writes for such cells (read.WriteLongCSV), read as graded scores
	// without --graded.
	GradedNames        = []string{"graded_score"}
	GradedSuccessNames = []string{"graded_successes"}
	TextNames          = []string{"text", "prompt"}
	GroupNames         = []string{"category", "benchmark"}
	FreqNames          = []string{"freq", "frequency"}
)

// FindColumn returns the index of the first of names present in header, or -1.
func FindColumn(header []string, names []string) int {
	for _, n := range names {
		for k, h := range header {
			if strings.EqualFold(h, n) {
				return k
			}
		}
	}
	return -1
}

// LongColumns are the columns of a long file, -1 where absent: Label is the
// label column, or with Trials the successes column (a successes column,
// else the label column holding counts); Trials is -1 for 0/1 labels. Graded
// says the label column is one of GradedNames or GradedSuccessNames: its
// fractions are graded scores whatever the options say.
type LongColumns struct {
	Model, Item, Label, Trials, Text, Group int
	Graded                                  bool
}

// FindLongColumns finds the columns of a long file in header, and reports
// whether it has model, item and label columns.
func FindLongColumns(header []string) (LongColumns, bool) {
	c := LongColumns{
		Model:  FindColumn(header, ModelNames),
		Item:   FindColumn(header, ItemNames),
		Label:  FindColumn(header, LabelNames),
		Trials: FindColumn(header, TrialNames),
		Text:   FindColumn(header, TextNames),
		Group:  FindColumn(header, GroupNames),
	}
	if c.Label < 0 {
		if k := FindColumn(header, GradedNames); k >= 0 {
			c.Label, c.Graded = k, true
		}
	}
	if c.Trials >= 0 {
		if k := FindColumn(header, SuccessNames); k >= 0 {
			c.Label, c.Graded = k, false
		} else if k := FindColumn(header, GradedSuccessNames); k >= 0 {
			c.Label, c.Graded = k, true
		}
	}
	return c, c.Model >= 0 && c.Item >= 0 && c.Label >= 0
}

// Describe names the columns found, for Report.Why.
func (c LongColumns) Describe(h []string) string {
	graded := ""
	if c.Graded {
		graded = "graded "
	}
	if c.Trials >= 0 {
		return fmt.Sprintf("model column %q, item column %q, %ssuccesses column %q and trials column %q",
			limits.Clip(h[c.Model]), limits.Clip(h[c.Item]), graded, limits.Clip(h[c.Label]), limits.Clip(h[c.Trials]))
	}
	if c.Graded {
		return fmt.Sprintf("model column %q, item column %q and graded score column %q", limits.Clip(h[c.Model]), limits.Clip(h[c.Item]), limits.Clip(h[c.Label]))
	}
	return fmt.Sprintf("model column %q, item column %q and label column %q", limits.Clip(h[c.Model]), limits.Clip(h[c.Item]), limits.Clip(h[c.Label]))
}

// SetFirst records v for item i unless the item already has a non-empty value.
func SetFirst(list []string, i int, v []byte) []string {
	for len(list) <= i {
		list = append(list, "")
	}
	if list[i] == "" && len(v) > 0 {
		list[i] = string(v)
	}
	return list
}

// PadTo pads list with empty strings to n.
func PadTo(list []string, n int) []string {
	for len(list) < n {
		list = append(list, "")
	}
	return list
}
