package irtrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/read"
)

// FitJoint fits several benchmarks as one response matrix (BenchMIRT's joint
// fit): rs[k], named names[k] and read from j.Data[k], are joined by
// model.JoinBenchmarks (models matched by name, items kept per benchmark and
// grouped by it), fitted once with j.Settings, and analysed, so that the
// folder's group_loadings are each benchmark's mean loading on every
// dimension. It returns the fit and the joined matrix.
func FitJoint(ctx context.Context, j FitJob, names []string, rs []*model.Responses) (*Fitted, *model.Responses, error) {
	if len(rs) < 2 {
		return nil, nil, fmt.Errorf("--joint needs at least two --data files, got %d", len(rs))
	}
	if len(j.Data) != len(rs) {
		return nil, nil, fmt.Errorf("--joint: %d --data paths for %d matrices", len(j.Data), len(rs))
	}
	r, err := model.JoinBenchmarks(names, rs)
	if err != nil {
		return nil, nil, err
	}
	set := j.Settings
	set.Joint, set.JointData, set.JointNames = true, append([]string(nil), j.Data...), append([]string(nil), names...)
	one := j
	one.Settings = set
	one.Data = []string{strings.Join(j.Data, ",")}
	fits, secs, err := one.Run(ctx, []*model.Responses{r})
	if err != nil {
		return nil, nil, err
	}
	if err := one.Analyze(ctx, 0, r, fits[0], secs); err != nil {
		return nil, nil, err
	}
	return fits[0], r, nil
}

// ReadFitData reads the responses a fit folder's settings name, as the fit
// read them: settings.data, or for a joint fit each of settings.joint_data
// joined again under settings.joint_names.
func ReadFitData(s irtfit.Settings) (*model.Responses, error) {
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
