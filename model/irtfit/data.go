package irtfit

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read"
)

// ReadData reads the responses a fit folder's settings name, as the fit
// read them: settings.data, or for a joint fit each of settings.joint_data
// joined again under settings.joint_names.
func ReadData(s Settings) (*model.Responses, error) {
	ro := read.Options{Format: s.Format, Items: s.Items, Duplicates: s.Duplicates, Graded: s.Graded}
	if !s.Joint {
		r, _, err := read.File(s.Data, ro)
		return r, err
	}
	if len(s.JointData) != len(s.JointNames) || len(s.JointData) < 2 {
		return nil, fmt.Errorf("joint fit: %d files and %d names in settings", len(s.JointData), len(s.JointNames))
	}
	rs := make([]*model.Responses, len(s.JointData))
	for k, p := range s.JointData {
		r, _, err := read.File(p, ro)
		if err != nil {
			return nil, err
		}
		rs[k] = r
	}
	return model.JoinBenchmarks(s.JointNames, rs)
}

// ReadFolderData reads again the responses of the fit folder f (in dir),
// as ReadData, from where its data files are now with the bytes fitted
// (Settings.Resolve). A fit from before paths were
// recorded absolute has them relative to a folder it does not record:
// they are read from here, and what is read must have the fit's models
// and items with the accuracies and answer counts of its abilities.csv
// and items.csv, or it is another file and an error says so. f's
// settings then name the files where they are now (its items file, for a
// refit's lower asymptotes).
func ReadFolderData(dir string, f *Folder) (*model.Responses, error) {
	s, err := f.Doc.Settings.Resolve(dir)
	if err != nil {
		return nil, err
	}
	f.Doc.Settings = s
	r, err := ReadData(s)
	if err != nil {
		return nil, err
	}
	relative := false
	for _, p := range s.DataFiles() {
		relative = relative || !filepath.IsAbs(p)
	}
	if !relative {
		return r, nil
	}
	if why := UnlikeFit(r, f); why != "" {
		return nil, fmt.Errorf("%s: fit.json's settings.data %q is relative to the folder the fit was run from, which this older fit does not record; read from here it is another file (%s): run this from that folder, or refit", dir, s.Data, why)
	}
	return r, nil
}

// UnlikeFit says how r differs from the data the folder f was fitted on
// (its models and items, each one's answer count and accuracy), "" when
// it does not.
func UnlikeFit(r *model.Responses, f *Folder) string {
	if r.NumModels() != len(f.Models) || r.NumItems() != len(f.Items) {
		return fmt.Sprintf("%d models x %d items, the fit has %d x %d", r.NumModels(), r.NumItems(), len(f.Models), len(f.Items))
	}
	bm, bi := r.ByModel(), r.ByItem()
	acc, pc := r.ModelAccuracy(), r.ItemAccuracy()
	near := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-9 }
	for i, m := range f.Models {
		if r.Models[i] != m.Name {
			return fmt.Sprintf("model %d is %q, in the fit %q", i+1, limits.Clip(r.Models[i]), limits.Clip(m.Name))
		}
		if n := len(bm.Row(i)); n != m.NObs && m.NObs > 0 || !near(acc[i], m.Accuracy) {
			return fmt.Sprintf("model %q has %d answers and accuracy %.6g, in the fit %d and %.6g", limits.Clip(m.Name), n, acc[i], m.NObs, m.Accuracy)
		}
	}
	for j, it := range f.Items {
		if r.Items[j] != it.ID {
			return fmt.Sprintf("item %d is %q, in the fit %q", j+1, limits.Clip(r.Items[j]), limits.Clip(it.ID))
		}
		if n := len(bi.Row(j)); n != it.NObs && it.NObs > 0 || !math.IsNaN(it.PCorrect) && !near(pc[j], it.PCorrect) {
			return fmt.Sprintf("item %q has %d answers and p_correct %.6g, in the fit %d and %.6g", limits.Clip(it.ID), n, pc[j], it.NObs, it.PCorrect)
		}
	}
	return ""
}
