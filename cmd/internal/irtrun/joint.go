package irtrun

import (
	"context"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// FitJoint fits several benchmarks as one response matrix (BenchMIRT's joint
// fit): rs[k], named names[k] and read from j.Data[k], are joined by
// model.JoinBenchmarks (models matched by name, items kept per benchmark and
// grouped by it), fitted once with j.Settings, and analysed, so that the
// folder's group_loadings are each benchmark's mean loading on every
// dimension. It returns the fit and the joined matrix.
func FitJoint(ctx context.Context, j FitJob, names []string, rs []*model.Responses) (*Fitted, *model.Responses, error) {
	if len(rs) < 2 {
		return nil, nil, model.FieldErrorf("Joint", "{Joint} needs at least two {Data} files, got %d", len(rs))
	}
	if len(j.Data) != len(rs) {
		return nil, nil, model.FieldErrorf("Joint", "{Joint}: %d {Data} paths for %d matrices", len(j.Data), len(rs))
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
