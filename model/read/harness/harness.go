// Package harness reads the item-level logs that evaluation tools write, as
// they write them: lm-evaluation-harness (results_*.json with its
// samples_<task>_*.jsonl, from --log_samples), HELM run folders
// (per_instance_stats.json, run_spec.json, scenario_state.json), inspect_ai
// logs (.eval zip files and .json logs) and Every Eval Ever instance-level
// files (*_samples.jsonl), one file or a whole tree of them, into
// model.Responses with each item's text and category.
//
// Every reader streams: JSON lines are read a line at a time, and the big
// JSON documents (scenario_state.json, per_instance_stats.json, inspect's
// .json logs) are walked with an encoding/json Decoder an array element at
// a time, so what is held grows with the cells, the models and the items,
// not with the prompts, completions and events of the logs.
package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read/harness/internal/logtree"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// The tools, as --format names them.
const (
	LMEval  = "lm-eval"
	HELM    = "helm"
	Inspect = "inspect"
	EEE     = "eee"
)

// Tools lists the tools in the order the summary names them.
var Tools = []string{LMEval, HELM, Inspect, EEE}

// Options says which tools to read and which of their metrics. The zero
// value reads every tool with each task's default metric.
type Options struct {
	// Tool is one of Tools, or "" (or "auto") for any.
	Tool string
	// Metric lists metric names in order of preference: each task is scored
	// by the first of them it has (lm-eval: a per-sample metric such as
	// acc or exact_match; HELM: a per-instance stat; inspect: a scorer;
	// Every Eval Ever: is_correct or score). Empty: each task's default
	// (lm-eval: the first of its metrics; HELM: the run's main metric, the
	// first its metric specs name; inspect: the first scorer; Every Eval
	// Ever: is_correct, else score).
	Metric []string
	// Filter is lm-eval's filter (its filter_list names); "" is the task's first.
	Filter string
	// Graded reads inspect's P (partial credit) as a score of 0.5; without
	// it a P is an error. Numeric scores in [0, 1] are scores either way.
	Graded bool
	// ModelNames maps a model's name as the logs give it to the name to use
	// (see ReadModelNames); names it does not list are kept as given.
	ModelNames map[string]string
	// Progress, when not nil, gets a line every few seconds of a long read
	// (files and samples read so far).
	Progress progress.Logf
}

// Summary says what was read: each log with its tool, model, task, metric
// and counts, and each file passed over with the reason.
type Summary struct {
	Root    string `json:"root"`
	Logs    []Log  `json:"logs"`
	Skipped []Skip `json:"skipped"`
	// Models, Items and Cells count the responses read; Samples the
	// scored samples (several trials of one cell count once each).
	Models  int `json:"models"`
	Items   int `json:"items"`
	Cells   int `json:"cells"`
	Samples int `json:"samples"`
}

// Log is one log read: a results file with its samples (lm-eval, one Log a
// task), a run folder (HELM), an eval log (inspect) or a samples file
// (Every Eval Ever, one Log a model and evaluation).
type Log struct {
	Path   string `json:"path"`
	Tool   string `json:"tool"`
	Model  string `json:"model"`
	Task   string `json:"task"`
	Metric string `json:"metric"`
	Filter string `json:"filter,omitempty"` // lm-eval only
	// Samples were scored; Passed are samples of the log not read, for the
	// reason in Why (another filter, an errored sample, a perturbation).
	Samples int    `json:"samples"`
	Passed  int    `json:"passed_over,omitempty"`
	Why     string `json:"passed_over_why,omitempty"`
}

// Skip is a file or a part of a log that was not read, and why.
type Skip struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Tasks is the number of distinct (tool, task) pairs read.
func (s *Summary) Tasks() int {
	seen := map[[2]string]bool{}
	for _, l := range s.Logs {
		seen[[2]string{l.Tool, l.Task}] = true
	}
	return len(seen)
}

// String renders the summary for people: the tools, the counts, a line per
// task with its metric, filter, models and samples, and what was skipped.
func (s *Summary) String() string {
	var b strings.Builder
	type task struct {
		tool, task      string
		metrics, filter []string
		models          []string
		samples, passed int
		why             []string
	}
	var tasks []*task
	byKey := map[[2]string]*task{}
	logs := map[string]int{}
	for _, l := range s.Logs {
		logs[l.Tool]++
		k := [2]string{l.Tool, l.Task}
		t := byKey[k]
		if t == nil {
			t = &task{tool: l.Tool, task: l.Task}
			byKey[k] = t
			tasks = append(tasks, t)
		}
		addOnce(&t.metrics, l.Metric)
		addOnce(&t.filter, l.Filter)
		addOnce(&t.models, l.Model)
		t.samples += l.Samples
		t.passed += l.Passed
		if l.Passed > 0 {
			addOnce(&t.why, l.Why)
		}
	}
	var tools []string
	for _, tool := range Tools {
		if logs[tool] > 0 {
			tools = append(tools, fmt.Sprintf("%s (%d %s)", tool, logs[tool], plural(logs[tool], "log")))
		}
	}
	if len(tools) == 0 {
		tools = []string{"none"}
	}
	fmt.Fprintf(&b, "tools: %s\n", strings.Join(tools, ", "))
	fmt.Fprintf(&b, "models: %d, tasks: %d, items: %d, cells: %d (from %d scored samples)\n", s.Models, len(tasks), s.Items, s.Cells, s.Samples)
	for _, t := range tasks {
		fmt.Fprintf(&b, "  %s %s: metric %s", t.tool, t.task, strings.Join(t.metrics, "|"))
		if t.tool == LMEval {
			fmt.Fprintf(&b, ", filter %s", strings.Join(t.filter, "|"))
		}
		fmt.Fprintf(&b, ", %d %s, %d %s", len(t.models), plural(len(t.models), "model"), t.samples, plural(t.samples, "sample"))
		if t.passed > 0 {
			fmt.Fprintf(&b, " (%d passed over: %s)", t.passed, strings.Join(t.why, "; "))
		}
		b.WriteByte('\n')
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(&b, "skipped: %d\n", len(s.Skipped))
		for k, sk := range s.Skipped {
			if k == 20 {
				fmt.Fprintf(&b, "  … and %d more\n", len(s.Skipped)-k)
				break
			}
			fmt.Fprintf(&b, "  %s: %s\n", sk.Path, sk.Why)
		}
	}
	return b.String()
}

func addOnce(list *[]string, s string) {
	if s != "" && !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// lookedFor is what a tree is searched for, for the errors that find none.
const lookedFor = "lm-eval results_*.json with its samples_*.jsonl, a HELM run folder with per_instance_stats.json and run_spec.json, an inspect .eval or .json log, an Every Eval Ever *_samples.jsonl"

// Read reads the logs at root: one log file, a HELM run folder, or a
// folder searched recursively for logs of every tool (opt.Tool: of one).
// Several samples of one model on one item (epochs, train trials, repeated
// runs) are trials of one cell. Models are in sorted order and items in
// the order a long file of the cells names them (longFileOrder), so the
// same logs give the same responses however the tree is laid out.
func Read(root string, opt Options) (*model.Responses, *Summary, cell.Tally, error) {
	sum := &Summary{Root: root}
	if opt.Tool == "auto" {
		opt.Tool = ""
	}
	if opt.Tool != "" && !slices.Contains(Tools, opt.Tool) {
		return nil, sum, cell.Tally{}, fmt.Errorf("unknown log format %q (want %s)", opt.Tool, strings.Join(Tools, ", "))
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, sum, cell.Tally{}, err
	}
	dir := root
	if !fi.IsDir() {
		if why := logtree.NotFile(fi.Mode()); why != "" {
			return nil, sum, cell.Tally{}, fmt.Errorf("%s is %s, not a log file: logs are read from regular files and folders", root, why)
		}
		dir = filepath.Dir(root)
	}
	tree, err := logtree.New(fileio.InputContext(), dir)
	if err != nil {
		return nil, sum, cell.Tally{}, err
	}
	c := newCollector(opt, sum, tree)
	if fi.IsDir() {
		err = c.tree()
	} else {
		err = c.file(root)
	}
	if err != nil {
		return nil, sum, cell.Tally{}, err
	}
	if len(sum.Logs) == 0 || c.sink.Held() == 0 {
		msg := fmt.Sprintf("%s: no evaluation logs with scored samples found (looked for %s)", root, lookedFor)
		if opt.Tool != "" {
			msg = fmt.Sprintf("%s: no %s logs with scored samples found", root, opt.Tool)
		}
		if fi.IsDir() {
			msg = fmt.Sprintf("%s: a folder, read as a tree of evaluation-tool logs, with no logs of scored samples in it (looked for %s; to read a response file, name the file)", root, lookedFor)
		}
		if len(sum.Skipped) > 0 {
			msg += fmt.Sprintf("; skipped %d, the first %s: %s", len(sum.Skipped), sum.Skipped[0].Path, sum.Skipped[0].Why)
		}
		return nil, sum, cell.Tally{}, fmt.Errorf("%s", msg)
	}
	r, t, err := c.finish(root)
	if err != nil {
		return nil, sum, t, err
	}
	sum.Models, sum.Items, sum.Cells = len(r.Models), len(r.Items), r.Len()
	return r, sum, t, nil
}

// tree reads every log under the tree's root, in lexical order of the
// paths (package logtree says which names it follows).
func (c *collector) tree() error {
	return c.t.Walk(func(p string, dir bool) (bool, error) {
		if !dir {
			err := c.file(p)
			c.progress(p)
			return false, err
		}
		if !isHELMRun(p) {
			return true, nil
		}
		if c.wants(HELM) {
			if err := c.helmRun(p); err != nil {
				return false, err
			}
			c.progress(p)
		} else {
			c.skip(p, "a HELM run folder, not --format "+c.opt.Tool)
		}
		return false, nil
	}, c.skip)
}

// file reads one log file found by tree or given by the user.
func (c *collector) file(p string) error {
	tool, kind, err := classify(p)
	switch {
	case err != nil:
		if c.walking(p) {
			c.skip(p, fmt.Sprintf("cannot be read (%v): a log here is not read; make it readable (chmod +r) or move it out of the tree", err))
			return nil
		}
		return fmt.Errorf("%s cannot be read: %w", p, err)
	case tool == "":
		if c.walking(p) {
			c.skip(p, "not a log of a known tool")
			return nil
		}
		return fmt.Errorf("%s: not a log of a known tool (looked for %s)", p, lookedFor)
	case kind == kindPart:
		if !c.walking(p) {
			if tool == HELM {
				return c.helmRun(filepath.Dir(p))
			}
			return c.lmEvalSamplesAlone(p)
		}
		if tool == LMEval && !c.claimed[p] {
			c.orphans = append(c.orphans, p)
		}
		return nil
	case !c.wants(tool):
		if c.walking(p) {
			c.skip(p, fmt.Sprintf("a log of %s, not --format %s", tool, c.opt.Tool))
			return nil
		}
		return fmt.Errorf("%s is a log of %s, not of %s (--format %s or auto)", p, tool, c.opt.Tool, tool)
	}
	switch tool {
	case LMEval:
		return c.lmEvalResults(p)
	case Inspect:
		if kind == kindZip {
			return c.inspectEval(p)
		}
		return c.inspectJSON(p)
	case EEE:
		if kind == kindAggregate {
			c.aggregates = append(c.aggregates, p)
			// Named on its own, an aggregate is read through its samples.
			if side := strings.TrimSuffix(p, ".json") + "_samples.jsonl"; !c.walking(p) {
				if err := c.t.Check(side); err == nil {
					return c.eeeSamples(side)
				} else if !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			return nil
		}
		return c.eeeSamples(p)
	}
	return nil
}

func (c *collector) wants(tool string) bool { return c.opt.Tool == "" || c.opt.Tool == tool }

// walking says whether p was found by searching a folder, not named.
func (c *collector) walking(p string) bool { return p != c.sum.Root }

func (c *collector) skip(p, why string) {
	c.sum.Skipped = append(c.sum.Skipped, Skip{Path: p, Why: why})
}

// collector gathers the cells of every log read, with the items' texts and
// categories, into one sink.
type collector struct {
	opt        Options
	sum        *Summary
	t          *logtree.Tree // the folder read, or the folder of the file named
	models     *cell.Names
	items      *cell.Names
	text       []string
	group      []string
	itemKeys   []itemKey // each item's tool, task and id
	key        []byte    // the key of an item looked up, reused
	sink       *cell.Sink
	claimed    map[string]bool // lm-eval samples files read with their results file
	orphans    []string        // lm-eval samples files seen before their results file was
	aggregates []string        // Every Eval Ever aggregates, matched to their samples at the end
	eeeRead    map[string]bool // Every Eval Ever samples files read
	files      int             // log files read
	said       time.Time       // when progress was last given (the start, at first)
}

// progress counts a log file read and says how far the read is every 5 s.
func (c *collector) progress(p string) {
	c.files++
	if c.opt.Progress == nil {
		return
	}
	if time.Since(c.said) >= 5*time.Second {
		c.said = time.Now()
		c.opt.Progress.Printf("logs: %d files read, %d samples, %d models, %d items so far (at %s)", c.files, c.sum.Samples, len(c.models.List), len(c.items.List), p)
	}
}

func newCollector(opt Options, sum *Summary, t *logtree.Tree) *collector {
	return &collector{opt: opt, sum: sum, t: t, models: cell.NewNames(), items: cell.NewNames(),
		sink: cell.NewSink(false), claimed: map[string]bool{}, eeeRead: map[string]bool{}, said: time.Now()}
}

// model returns a log's model, named as the log names it: its index is
// taken at its first scored sample, so that a log without one adds no model.
func (c *collector) model(name string) *logModel {
	return &logModel{c: c, name: name, m: -1}
}

type logModel struct {
	c    *collector
	name string
	m    int32
}

// index is the model's index, mapped by --model-names.
func (lm *logModel) index() int32 {
	if lm.m < 0 {
		name := lm.name
		if to, ok := lm.c.opt.ModelNames[name]; ok {
			name = to
		}
		lm.m = lm.c.models.ID([]byte(name))
	}
	return lm.m
}

// item returns the index of the item id of tool's task, and whether it
// has no text yet. Items are keyed by tool, task and id, so that two
// tools' ids never merge (itemNames names them).
func (c *collector) item(tool, task, id, category string) (int32, bool) {
	c.key = append(append(append(append(append(c.key[:0], tool...), 0), task...), 0), id...)
	i := c.items.ID(c.key)
	if int(i) == len(c.text) {
		c.text = append(c.text, "")
		c.group = append(c.group, category)
		c.itemKeys = append(c.itemKeys, itemKey{tool, task, id})
		return i, true
	}
	return i, c.text[i] == ""
}

// itemKey is what an item is keyed by.
type itemKey struct{ tool, task, id string }

// itemNames names each item key TASK/ID, as the tools name them. Ids are
// compared within a tool's task only: the tasks of one name read from the
// logs of several tools are one task when each id they share is the same
// question (the same, non-empty text), and are otherwise told apart as
// TOOL:TASK/ID (lm-eval's doc 1 and inspect's sample 1 of two tasks named
// arith are two items). Keys given one name are one item; two items of one
// name (a task name ending in /ID of another's) are an error naming both.
func (c *collector) itemNames() ([]string, error) {
	type taskID struct{ task, id string }
	byID := map[taskID]int{} // the first key of each task and id
	apart := map[string]bool{}
	for i, k := range c.itemKeys {
		ti := taskID{k.task, k.id}
		first, ok := byID[ti]
		if !ok {
			byID[ti] = i
			continue
		}
		if c.text[i] == "" || c.text[i] != c.text[first] {
			apart[k.task] = true
		}
	}
	names := make([]string, len(c.itemKeys))
	owner := make(map[string]int, len(names)) // each name's first key
	for i, k := range c.itemKeys {
		names[i] = k.task + "/" + k.id
		if apart[k.task] {
			names[i] = k.tool + ":" + names[i]
		}
		j, ok := owner[names[i]]
		if !ok {
			owner[names[i]] = i
			continue
		}
		if o := c.itemKeys[j]; o.task != k.task || o.id != k.id || apart[k.task] && o.tool != k.tool {
			return nil, fmt.Errorf("%s: two items are named %q: %s task %q id %q and %s task %q id %q (a task's name ending in /ID of another's): rename a task, or read the logs apart", c.sum.Root, limits.Clip(names[i]), o.tool, limits.Clip(o.task), limits.Clip(o.id), k.tool, limits.Clip(k.task), limits.Clip(k.id))
		}
	}
	return names, nil
}

func (c *collector) setText(i int32, text string) {
	if c.text[i] == "" {
		c.text[i] = text
	}
}

// score adds a sample's score x in [0, 1] (a 0/1 outcome or a graded
// score) as one trial of the cell (m, i).
func (c *collector) score(m *logModel, i int32, x float64, line int) {
	c.sum.Samples++
	c.sink.AddCounts(m.index(), i, x, 1, line)
}

// jsonError renders an error of encoding/json on the document b with the
// line it is at.
func jsonError(b []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(b)) {
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", 1+bytes.Count(b[:off], []byte("\n")), err)
}

// checkScore refuses a score outside [0, 1], naming the metric.
func checkScore(x float64, metric string) error {
	if math.IsNaN(x) || x < 0 || x > 1 {
		return fmt.Errorf("metric %q gives %v, not a score in [0, 1] (choose a 0/1 or [0, 1] metric with --metric, or rescale the scores to [0, 1] and read them as a long file)", metric, x)
	}
	return nil
}

// finish matches what was left over, sorts models and items, and resolves
// the cells (repeats are trials).
func (c *collector) finish(root string) (*model.Responses, cell.Tally, error) {
	for _, p := range c.orphans {
		if !c.claimed[p] {
			c.skip(p, "an lm-eval samples file without its results_TIMESTAMP.json beside it (the model's name is there)")
		}
	}
	for _, p := range c.aggregates {
		if s := strings.TrimSuffix(p, ".json") + "_samples.jsonl"; !c.eeeRead[s] {
			c.skip(p, "an Every Eval Ever aggregate without its instance-level _samples.jsonl: no item-level results in it")
		}
	}
	mPerm, models := sortedOrder(c.models.List)
	names, err := c.itemNames()
	if err != nil {
		return nil, cell.Tally{}, err
	}
	// Keys of one name are one item: iPerm maps each key to its item.
	var uniq []string
	seen := map[string]int32{}
	keyOf := make([]int32, len(names))
	for k, n := range names {
		u, ok := seen[n]
		if !ok {
			u = int32(len(uniq))
			seen[n] = u
			uniq = append(uniq, n)
		}
		keyOf[k] = u
	}
	uPerm, items := sortedOrder(uniq)
	iPerm := make([]int32, len(names))
	for k, u := range keyOf {
		iPerm[k] = uPerm[u]
	}
	c.sink.Renumber(mPerm, iPerm)
	r := &model.Responses{Models: models, Items: items, ItemText: make([]string, len(items)), ItemGroup: make([]string, len(items))}
	for j, p := range iPerm {
		if r.ItemText[p] == "" {
			r.ItemText[p] = c.text[j]
		}
		if r.ItemGroup[p] == "" {
			r.ItemGroup[p] = c.group[j]
		}
	}
	t, err := c.sink.Finish(r, "trials", root)
	if err != nil {
		return r, t, err
	}
	longFileOrder(r)
	return r, t, nil
}

// longFileOrder puts r's items in the order a long file of its cells,
// model by model and each model's items by id, first names them (the
// items of the first model by id, then the next model's new items by id,
// ...), so that the responses `data import` writes read back with the same
// indices, hence the same fit. Models stay sorted; cells stay sorted by
// model, then item.
func longFileOrder(r *model.Responses) {
	newIdx := make([]int32, len(r.Items))
	for i := range newIdx {
		newIdx[i] = -1
	}
	next := int32(0)
	for _, i := range r.Item {
		if newIdx[i] < 0 {
			newIdx[i] = next
			next++
		}
	}
	same := true
	for i, v := range newIdx {
		if v < 0 { // an item with no cell (none are read so) goes last
			newIdx[i], next = next, next+1
		}
		same = same && newIdx[i] == int32(i)
	}
	if same {
		return
	}
	items, text, group := make([]string, len(r.Items)), make([]string, len(r.Items)), make([]string, len(r.Items))
	for i, v := range newIdx {
		items[v], text[v], group[v] = r.Items[i], r.ItemText[i], r.ItemGroup[i]
	}
	r.Items, r.ItemText, r.ItemGroup = items, text, group
	for c, i := range r.Item {
		r.Item[c] = newIdx[i]
	}
	// Within each model the cells are re-sorted by their new item index.
	perm := make([]int, len(r.Item))
	for c := range perm {
		perm[c] = c
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		if r.Model[a] != r.Model[b] {
			return int(r.Model[a]) - int(r.Model[b])
		}
		return int(r.Item[a]) - int(r.Item[b])
	})
	r.Item = permuted(r.Item, perm)
	r.Model = permuted(r.Model, perm)
	r.Label = permuted(r.Label, perm)
	if r.Successes != nil {
		r.Successes = permuted(r.Successes, perm)
	}
	if r.Trials != nil {
		r.Trials = permuted(r.Trials, perm)
	}
	r.Invalidate()
}

func permuted[T any](v []T, perm []int) []T {
	out := make([]T, len(v))
	for k, p := range perm {
		out[k] = v[p]
	}
	return out
}

// sortedOrder returns the sorted names and, for each name's old index, its new one.
func sortedOrder(names []string) ([]int32, []string) {
	idx := make([]int32, len(names))
	for k := range idx {
		idx[k] = int32(k)
	}
	slices.SortFunc(idx, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	perm := make([]int32, len(names))
	sorted := make([]string, len(names))
	for newIdx, old := range idx {
		perm[old] = int32(newIdx)
		sorted[newIdx] = names[old]
	}
	return perm, sorted
}
