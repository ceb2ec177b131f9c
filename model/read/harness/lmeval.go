package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model/read/harness/internal/jsonscan"
)

// lm-evaluation-harness: results_TIMESTAMP.json holds the run (the model,
// each task's config and metrics, the groups); each task's samples are in
// samples_TASK_TIMESTAMP.jsonl beside it, one JSON object per document and
// filter: doc_id, doc, arguments (the prompts), filter, metrics and one key
// per metric with the document's score.

type lmResults struct {
	ModelName string                     `json:"model_name"`
	Results   map[string]json.RawMessage `json:"results"`
	Groups    map[string][]string        `json:"group_subtasks"`
	Configs   map[string]lmTaskConfig    `json:"configs"`
	NShot     map[string]json.RawMessage `json:"n-shot"`
	Config    struct {
		ModelName string          `json:"model_name"`
		ModelArgs json.RawMessage `json:"model_args"`
	} `json:"config"`
}

type lmTaskConfig struct {
	MetricList []struct {
		Metric json.RawMessage `json:"metric"`
	} `json:"metric_list"`
	FilterList []struct {
		Name string `json:"name"`
	} `json:"filter_list"`
	NumFewshot int `json:"num_fewshot"`
}

// lmQuestionKeys are the doc keys that hold a task's question, for a
// few-shot prompt (whose first argument holds the shots too).
var lmQuestionKeys = []string{"question", "problem", "query", "input", "text", "prompt", "sentence", "goal", "ctx", "context"}

// lmEvalResults reads a results file and the samples file of each of its tasks.
func (c *collector) lmEvalResults(p string) error {
	b, err := readDocument(p, 1<<30, "an lm-eval results file")
	if err != nil {
		return err
	}
	var res lmResults
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: not an lm-eval results file: %s", p, jsonError(b, err))
	}
	if res.Results == nil && res.Configs == nil {
		c.skip(p, "named results_*.json but has no results or configs: not an lm-eval results file")
		return nil
	}
	name := res.modelName()
	if name == "" {
		return fmt.Errorf("%s: no model name (looked for model_name and config.model_args' pretrained=)", p)
	}
	stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "results_"), ".json")
	dir := filepath.Dir(p)
	tasks := make([]string, 0, len(res.Configs))
	for t := range res.Configs {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, task := range tasks {
		if why := notFileName(task); why != "" {
			c.skip(p, fmt.Sprintf("task %q: %s, so no samples file is looked for (lm-eval names a samples file samples_TASK_TIMESTAMP.jsonl)", task, why))
			continue
		}
		sp := filepath.Join(dir, "samples_"+task+"_"+stamp+".jsonl")
		if err := c.t.Check(sp); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				c.skip(p, fmt.Sprintf("task %s: no %s beside it (run lm-eval with --log_samples)", task, filepath.Base(sp)))
			} else {
				c.skip(p, fmt.Sprintf("task %s: %v", task, err))
			}
			continue
		}
		c.claimed[sp] = true
		if err := c.lmEvalSamples(sp, name, task, &res); err != nil {
			return err
		}
	}
	return nil
}

// notFileName says why a name given inside a log cannot be one file name
// in a folder ("" when it can): it must not lead out of the folder.
func notFileName(name string) string {
	switch {
	case name == "":
		return "an empty name"
	case strings.ContainsAny(name, `/\`+"\x00"):
		return "a name with a path separator or a NUL byte in it, not a file name"
	case name == "." || name == "..":
		return "a name that is a folder's, not a file name"
	}
	return ""
}

// lmEvalSamplesAlone reads a samples file named on its own, with the
// results file of its timestamp beside it.
func (c *collector) lmEvalSamplesAlone(sp string) error {
	base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sp), "samples_"), ".jsonl")
	dir := filepath.Dir(sp)
	results, _ := filepath.Glob(filepath.Join(dir, "results_*.json"))
	for _, rp := range results {
		stamp := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(rp), "results_"), ".json")
		if task, ok := strings.CutSuffix(base, "_"+stamp); ok {
			if err := c.t.Check(rp); err != nil {
				return fmt.Errorf("%s: its results file: %w", sp, err)
			}
			b, err := readDocument(rp, 1<<30, "an lm-eval results file")
			if err != nil {
				return err
			}
			var res lmResults
			if err := json.Unmarshal(b, &res); err != nil {
				return fmt.Errorf("%s: not an lm-eval results file: %s", rp, jsonError(b, err))
			}
			name := res.modelName()
			if name == "" {
				return fmt.Errorf("%s: no model name (looked for model_name and config.model_args' pretrained=)", rp)
			}
			return c.lmEvalSamples(sp, name, task, &res)
		}
	}
	return fmt.Errorf("%s: an lm-eval samples file without the results_TIMESTAMP.json of its run beside it (the model's name is there)", sp)
}

// modelName is model_name, else config.model_name, else model_args' pretrained=.
func (r *lmResults) modelName() string {
	if r.ModelName != "" {
		return r.ModelName
	}
	if r.Config.ModelName != "" {
		return r.Config.ModelName
	}
	if s, ok := jsonscan.Str(r.Config.ModelArgs); ok {
		for _, kv := range strings.Split(s, ",") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "pretrained="); ok {
				return v
			}
		}
		return ""
	}
	var args map[string]any
	if json.Unmarshal(r.Config.ModelArgs, &args) == nil {
		if v, ok := args["pretrained"].(string); ok {
			return v
		}
	}
	return ""
}

// category is the task, under its groups (group/subgroup/task).
func (r *lmResults) category(task string) string {
	path := task
	seen := map[string]bool{task: true}
	for cur := task; ; {
		parent := ""
		groups := make([]string, 0, len(r.Groups))
		for g := range r.Groups {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			if slices.Contains(r.Groups[g], cur) && !seen[g] {
				parent = g
				break
			}
		}
		if parent == "" {
			return path
		}
		seen[parent] = true
		path = parent + "/" + path
		cur = parent
	}
}

// lmLine is what is read of a samples line.
type lmLine struct {
	docID, filter, doc, args, metrics, score []byte
	hasScore                                 bool
}

// lmEvalSamples reads the samples file of one task.
func (c *collector) lmEvalSamples(sp, modelName, task string, res *lmResults) error {
	cfg := res.Configs[task]
	var metricNames []string
	for _, m := range cfg.MetricList {
		if s, ok := jsonscan.Str(m.Metric); ok {
			metricNames = append(metricNames, s)
		}
	}
	filter := c.opt.Filter
	if filter == "" && len(cfg.FilterList) > 0 {
		filter = cfg.FilterList[0].Name
	}
	category := res.category(task)
	m := c.model(modelName)
	log := Log{Path: sp, Tool: LMEval, Model: modelName, Task: task}
	var filters []string
	var miss missing
	metric := ""
	total := 0
	err := eachLine(sp, func(b []byte, n int) error {
		var l lmLine
		err := jsonscan.EachField(b, func(k, v []byte) bool {
			switch string(k) {
			case "doc_id":
				l.docID = v
			case "filter":
				l.filter = v
			case "doc":
				l.doc = v
			case "arguments":
				l.args = v
			case "metrics":
				l.metrics = v
			default:
				if metric != "" && string(k) == metric {
					l.score, l.hasScore = v, true
				}
			}
			return true
		})
		if err != nil {
			return lineError(sp, n, "", "%v", err)
		}
		lf, _ := jsonscan.Str(l.filter)
		addOnce(&filters, lf)
		if filter == "" {
			filter = lf
		}
		if l.filter != nil && lf != filter {
			log.Passed++
			log.Why = "other filters"
			return nil
		}
		if metric == "" {
			var err error
			if metric, err = c.lmChooseMetric(sp, n, b, l.metrics, metricNames); err != nil {
				return err
			}
			if score, err := jsonscan.Field(b, metric); err == nil && score != nil {
				l.score, l.hasScore = score, true
			}
		}
		id := jsonscan.ID(l.docID)
		if id == "" {
			return lineError(sp, n, "doc_id", "want a string or integer document id")
		}
		total++
		if !l.hasScore {
			miss.add(id)
			return nil
		}
		x, ok := jsonscan.Number(l.score)
		if why := notNumber(l.score); !ok && why != "" {
			return lineError(sp, n, metric, "%s", why)
		}
		if !ok {
			return lineError(sp, n, metric, "%s is not a per-sample score (a corpus metric such as bleu is scored on the whole task): choose another with --metric", clipRaw(l.score))
		}
		if err := checkScore(x, metric); err != nil {
			return lineError(sp, n, metric, "%v", err)
		}
		i, needText := c.item(LMEval, task, id, category)
		if needText {
			c.setText(i, lmText(l, cfg.NumFewshot))
		}
		c.score(m, i, x, n)
		log.Samples++
		return nil
	})
	if err != nil {
		return err
	}
	if c.opt.Filter != "" && log.Samples == 0 && total == 0 && len(filters) > 0 {
		return fmt.Errorf("%s: task %s has no filter %q (it has %s)", sp, task, c.opt.Filter, strings.Join(filters, ", "))
	}
	if err := miss.err(sp, task, metric, "doc_id", total); err != nil {
		return err
	}
	log.Metric, log.Filter = metric, filter
	if log.Samples == 0 {
		c.skip(sp, fmt.Sprintf("task %s: no scored samples", task))
		return nil
	}
	c.sum.Logs = append(c.sum.Logs, log)
	return nil
}

// lmChooseMetric picks the task's metric on its first line: the first of
// --metric the task has, else its first metric (the line's metrics list,
// else its config's metric_list).
func (c *collector) lmChooseMetric(sp string, n int, line, metricsRaw []byte, fromConfig []string) (string, error) {
	var have []string
	if metricsRaw != nil {
		json.Unmarshal(metricsRaw, &have)
	}
	if len(have) == 0 {
		have = fromConfig
	}
	if len(c.opt.Metric) == 0 {
		if len(have) == 0 {
			return "", lineError(sp, n, "metrics", "no metric named (want a metrics list, or metric_list in the task's config); name one with --metric")
		}
		return have[0], nil
	}
	for _, want := range c.opt.Metric {
		if slices.Contains(have, want) {
			return want, nil
		}
		if v, err := jsonscan.Field(line, want); err == nil && v != nil {
			return want, nil
		}
	}
	return "", lineError(sp, n, "", "the task has none of --metric %s (it has %s)", strings.Join(c.opt.Metric, ","), strings.Join(have, ", "))
}

// lmText is the prompt (the first argument of the first request), or for
// a few-shot task the doc's question when it has one.
func lmText(l lmLine, fewshot int) string {
	if fewshot > 0 && len(l.doc) > 0 && l.doc[0] == '{' {
		for _, k := range lmQuestionKeys {
			if v, _ := jsonscan.Field(l.doc, k); v != nil {
				if s, ok := jsonscan.Str(v); ok {
					return s
				}
			}
		}
	}
	if len(l.args) > 0 {
		switch l.args[0] {
		case '{':
			// {"gen_args_0": {"arg_0": prompt, "arg_1": ...}, ...}
			if v, _ := jsonscan.Path(l.args, "gen_args_0", "arg_0"); v != nil {
				if s, ok := jsonscan.Str(v); ok {
					return s
				}
			}
		case '[':
			// [[prompt, continuation], ...] (older versions)
			if first := jsonscan.First(l.args); first != nil {
				if s, ok := jsonscan.Str(jsonscan.First(first)); ok {
					return s
				}
				if s, ok := jsonscan.Str(first); ok {
					return s
				}
			}
		}
	}
	if len(l.doc) > 0 && l.doc[0] == '{' {
		for _, k := range lmQuestionKeys {
			if v, _ := jsonscan.Field(l.doc, k); v != nil {
				if s, ok := jsonscan.Str(v); ok {
					return s
				}
			}
		}
	}
	return ""
}

// clipRaw renders a raw JSON value for an error: its kind and its start.
func clipRaw(v []byte) string {
	kind := "the value"
	if len(v) > 0 {
		switch v[0] {
		case '[':
			kind = "a list"
		case '{':
			kind = "an object"
		case '"':
			kind = "a string"
		case 'n':
			kind = "null"
		}
	}
	s := string(v)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return kind + " " + s
}
