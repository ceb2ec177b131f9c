package read

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/harness"
)

// isLogs says whether auto should read path as evaluation-tool logs: a
// folder (searched for them), or a file one of the tools writes.
func isLogs(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	return fi.IsDir() || fi.Mode().IsRegular() && harness.Detect(path) != ""
}

// readLogs reads evaluation-tool logs (package harness): a log file, a
// HELM run folder, or a tree of logs.
func readLogs(path, format string, opt Options, rep *Report) (*model.Responses, *Report, error) {
	ho := harness.Options{Tool: format, Metric: opt.Metric, Filter: opt.Filter, Graded: opt.Graded, Progress: opt.Progress}
	if opt.ModelNames != "" {
		names, err := harness.ReadModelNames(opt.ModelNames)
		if err != nil {
			return nil, rep, err
		}
		ho.ModelNames = names
	}
	r, sum, t, err := harness.Read(path, ho)
	rep.Logs = sum
	if err != nil {
		return nil, rep, err
	}
	var tools []string
	for _, l := range sum.Logs {
		if !slices.Contains(tools, l.Tool) {
			tools = append(tools, l.Tool)
		}
	}
	rep.Format = strings.Join(tools, "+")
	if format == "auto" {
		rep.Why = "evaluation-tool logs, recognised by their names and keys"
	} else {
		rep.Why = "given by --format"
	}
	rep.Rows = sum.Samples
	rep.DuplicateCells, rep.DuplicateRows, rep.Conflicts = t.DuplicateCells, t.DuplicateRows, t.Conflicts
	if err := checkUTF8(path, r); err != nil {
		return nil, rep, err
	}
	if opt.Items != "" {
		if err := joinItemText(r, opt.Items, rep); err != nil {
			return nil, rep, err
		}
	}
	if r.Len() == 0 {
		return nil, rep, fmt.Errorf("%s: no cells", path)
	}
	return r, rep, nil
}
