package analyzerun

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/analyze"
	"github.com/jeirt/jeirt/train/sweep"
)

// This file holds the jobs of the jeirt analyze commands: each reads its
// inputs, prints a summary on w and returns the files to write.

// Files are an analysis's outputs by file name.
type Files map[string]func(io.Writer) error

// WriteFiles writes fs into the folder dir atomically (force replaces it)
// and returns the line jeirt analyze prints.
func WriteFiles(dir string, force bool, fs Files) (string, error) {
	err := fileio.WriteDirAtomic(dir, force, func(tmp string) error {
		for name, write := range fs {
			if err := fileio.WriteFileAtomic(filepath.Join(tmp, name), write); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	var names []string
	for name := range fs {
		names = append(names, name)
	}
	sort.Strings(names)
	return fmt.Sprintf("wrote %s (%s)", dir, strings.Join(names, ", ")), nil
}

// GroupsFile writes an item file (item_id,text,category) whose category
// DeriveGroups derives by rule from the items of the responses in data, and
// returns the line jeirt analyze groups prints.
func GroupsFile(data string, ro read.Options, rule, out string) (string, error) {
	r, _, err := read.File(data, ro)
	if err != nil {
		return "", err
	}
	if r.ItemGroup, err = analyze.DeriveGroups(r.Items, r.ItemText, rule); err != nil {
		return "", err
	}
	if err := read.WriteItemsCSV(out, r); err != nil {
		return "", err
	}
	count := map[string]int{}
	for _, g := range r.ItemGroup {
		count[g]++
	}
	return fmt.Sprintf("wrote %s: %d items in %d categories (%d without one)", out, len(r.Items), len(count)-min(count[""], 1), count[""]), nil
}

// DirectionsRun clusters the question directions of the checkpoint in
// Checkpoint against the categories of the item-group file Groups (an item
// id and a category or benchmark column, as GroupsFile writes).
type DirectionsRun struct {
	Checkpoint, Groups string
	analyze.Directions
	Log progress.Logf // warnings; nil is silent
}

// Run is jeirt analyze directions.
func (d DirectionsRun) Run(w io.Writer) (Files, error) {
	ck, err := checkpoint.Open(d.Checkpoint, "", d.Log)
	if err != nil {
		return nil, err
	}
	cat, err := ItemCategories(ck.Model.Items, d.Groups)
	if err != nil {
		return nil, err
	}
	res, err := d.Directions.Run(ck.Model.Q, ck.Model.Dim, cat)
	if err != nil {
		return nil, err
	}
	res.Summary(w)
	return Files{"clusters.csv": res.WriteClusters, "directions.svg": res.WriteFigure, "directions.png": res.WriteFigurePNG,
		"assignments.csv": func(w io.Writer) error { return res.WriteAssignments(w, ck.Model.Items, cat) }}, nil
}

// ProbeRun projects the models of a checkpoint on the difference-of-means
// axis "A,B" between two categories of the item-group file Groups; Data,
// when set, adds each model's accuracy on both (read with Read).
type ProbeRun struct {
	Checkpoint, Groups, Axis, Data string
	Read                           read.Options
	Log                            progress.Logf // warnings; nil is silent
}

// Run is jeirt analyze probe.
func (p ProbeRun) Run(w io.Writer) (Files, error) {
	if p.Groups == "" && p.Read.Items != "" {
		// Before --groups, --items named the category file.
		p.Log.Printf("probe: --items for the categories is deprecated; use --groups (--items is the item texts of --data)")
		p.Groups = p.Read.Items
	}
	if p.Groups == "" {
		return nil, fmt.Errorf("jeirt analyze probe: --groups is required")
	}
	ab := strings.Split(p.Axis, ",")
	if len(ab) != 2 || ab[0] == "" || ab[1] == "" {
		return nil, model.FieldErrorf("Axis", "{Axis} %q: want two categories, A,B", p.Axis)
	}
	ck, err := checkpoint.Open(p.Checkpoint, "", p.Log)
	if err != nil {
		return nil, err
	}
	cat, err := ItemCategories(ck.Model.Items, p.Groups)
	if err != nil {
		return nil, err
	}
	var r *model.Responses
	if p.Data != "" {
		if r, _, err = read.File(p.Data, p.Read); err != nil {
			return nil, err
		}
	}
	res, err := analyze.Probe(ck.Model, cat, ab[0], ab[1], r)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "axis %s − %s (%d and %d items): item AUC %.4f; Spearman(projection, accuracy gap) %.4f",
		res.A, res.B, res.NA, res.NB, model.Float(res.ItemAUC), model.Float(res.AccuracyGapSpearman))
	if res.GapNote != "" {
		fmt.Fprintf(w, " (n/a: %s)", res.GapNote)
	}
	fmt.Fprintln(w)
	return Files{"probe.csv": res.Write, "probe.svg": res.WriteFigure, "probe.png": res.WriteFigurePNG}, nil
}

// ICCRun draws the empirical item characteristic curves of the fit folder
// Fit, whose responses are read again.
type ICCRun struct {
	Fit string
	analyze.ICC
}

// Run is jeirt analyze icc.
func (c ICCRun) Run(w io.Writer) (Files, error) {
	folder, err := irtfit.Read(c.Fit)
	if err != nil {
		return nil, err
	}
	r, err := irtfit.ReadFolderData(c.Fit, folder)
	if err != nil {
		return nil, fmt.Errorf("re-reading the fit's responses: %w", err)
	}
	res, err := c.ICC.Run(r, folder.IRT())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%d items, %d ability bins: %d non_monotone, %d negative_slope\n",
		len(res.Items), len(res.Mid), res.Count[analyze.FlagNonMonotone], res.Count[analyze.FlagNegativeSlope])
	return Files{"icc_items.csv": res.WriteItems, "icc_curves.csv": res.WriteCurves,
		"icc.svg": func(w io.Writer) error { return res.WriteFigure(w, 6) }, "icc.png": func(w io.Writer) error { return res.WriteFigurePNG(w, 6) }}, nil
}

// DimsRun tables a sweep's finished runs against the config key Key.
type DimsRun struct{ Sweep, Key string }

// Run is jeirt analyze dims.
func (d DimsRun) Run(w io.Writer) (Files, error) {
	t, err := sweep.Collect(d.Sweep)
	if err != nil {
		return nil, err
	}
	rows, err := Dims(t, d.Key)
	if err != nil {
		return nil, err
	}
	DimsSummary(w, rows)
	return Files{"dims.csv": func(w io.Writer) error { return WriteDims(w, rows) },
		"dims.svg": func(w io.Writer) error { return WriteDimsFigure(w, rows) }, "dims.png": func(w io.Writer) error { return WriteDimsFigurePNG(w, rows) }}, nil
}

// LOBORun tables the leave-one-benchmark-out checkpoints dirs (jeirt
// analyze lobo).
func LOBORun(w io.Writer, dirs []string) (Files, error) {
	l, err := CollectLOBO(dirs)
	if err != nil {
		return nil, err
	}
	l.Summary(w)
	return Files{"lobo.csv": l.Write}, nil
}
