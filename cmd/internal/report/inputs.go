package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/route"
)

// RoutePoint is one row of the CSV written by `jeirt route eval`.
type RoutePoint = route.RoutePoint

// ReadRouteCSV reads the cost-quality curve written by `jeirt route eval`.
// A curve written without --costs has no costs (MeanCost NaN): the report
// then shows its table without the cost-quality figure.
func ReadRouteCSV(path string) ([]RoutePoint, error) {
	return route.ReadRouteCSV(path)
}

func readCheckpointMetrics(dir string, ck *checkpoint.Checkpoint) (*checkpoint.RunMetrics, error) {
	p := filepath.Join(dir, checkpoint.MetricsFile)
	raw, err := fileio.ReadInputFile(p, fileio.MaxDocumentBytes, "a JSON file")
	if err != nil {
		raw, p = ck.Manifest.Metrics, filepath.Join(dir, "manifest.json")
	}
	if len(raw) == 0 {
		return nil, nil
	}
	return checkpoint.ParseRunMetrics(p, raw)
}

// loadCheckpointData reads the responses a checkpoint was trained on, from
// dataPath when given, else from the paths in its manifest's config. It
// returns nil (and a note saying why) when they cannot be found.
func loadCheckpointData(ck *checkpoint.Checkpoint, dataPath, itemsPath string, dataRead read.Options) (*model.Responses, string, string) {
	var cfg pipeline.Config // as run: its data paths are absolute
	_ = json.Unmarshal(ck.Manifest.Config, &cfg)
	ro := read.Options{Format: cfg.Data.Format, Items: cfg.Data.Items}
	if ro.Format == "" {
		ro.Format = "auto"
	}
	var paths []string
	switch {
	case dataPath != "":
		paths = []string{dataPath}
		ro = dataRead
		ro.Items = itemsPath
	case cfg.Data.Responses != "":
		paths = []string{cfg.Data.Responses}
	case cfg.Data.Train != "":
		paths = []string{cfg.Data.Train, cfg.Data.Val, cfg.Data.Test}
	default:
		return nil, "", "the checkpoint's config names no data; pass --data"
	}
	var parts []*model.Responses
	for _, p := range paths {
		r, _, err := read.File(p, ro)
		if err != nil {
			return nil, "", fmt.Sprintf("could not read the training data (%v); pass --data", err)
		}
		parts = append(parts, r)
	}
	if len(parts) == 1 {
		return parts[0], paths[0], ""
	}
	_, all := pipeline.MergeResponses(parts...)
	return all, strings.Join(paths, ", "), ""
}

// itemGroups gives each item a group for colouring: the data's group column
// when it has one, else the repository of an owner__repo-123 id (SWE-bench),
// else a "[tag]" that starts the item text (RewardBench's subsets), else the
// part of the id before the first "/" or ":". Items with none get "".
func itemGroups(ids []string, r *model.Responses) []string {
	out := make([]string, len(ids))
	at := map[string]int{}
	if r != nil {
		for k, id := range r.Items {
			at[id] = k
		}
	}
	for j, id := range ids {
		var text, group string
		if r != nil {
			if k, ok := at[id]; ok {
				if r.ItemGroup != nil {
					group = r.ItemGroup[k]
				}
				if r.ItemText != nil {
					text = r.ItemText[k]
				}
			}
		}
		switch {
		case group != "":
		case strings.Contains(id, "__"):
			// owner__repo-123 (SWE-bench): the repository.
			group = id[strings.Index(id, "__")+2:]
			if k := strings.LastIndex(group, "-"); k > 0 && strings.Trim(group[k+1:], "0123456789") == "" {
				group = group[:k]
			}
		case strings.HasPrefix(text, "[") && strings.Index(text, "]") > 1 && strings.Index(text, "]") < 60:
			group = text[1:strings.Index(text, "]")]
		case strings.IndexAny(id, "/:") > 0:
			group = id[:strings.IndexAny(id, "/:")]
		}
		out[j] = group
	}
	return out
}

// topGroups keeps the k largest groups and maps the rest to "other". Groups
// are returned largest first; it returns nil when fewer than two groups exist.
func topGroups(groups []string, k int) (names []string, of []int) {
	count := map[string]int{}
	for _, g := range groups {
		if g != "" {
			count[g]++
		}
	}
	if len(count) < 2 {
		return nil, nil
	}
	for g := range count {
		names = append(names, g)
	}
	sort.Slice(names, func(a, b int) bool {
		if count[names[a]] != count[names[b]] {
			return count[names[a]] > count[names[b]]
		}
		return names[a] < names[b]
	})
	other := len(names) > k
	if other {
		names = append(names[:k], "other")
	}
	idx := map[string]int{}
	for n, g := range names {
		idx[g] = n
	}
	of = make([]int, len(groups))
	for j, g := range groups {
		n, ok := idx[g]
		switch {
		case ok && g != "other":
			of[j] = n
		case other:
			of[j] = len(names) - 1
		default:
			of[j] = -1
		}
	}
	return names, of
}
