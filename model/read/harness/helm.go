package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read/harness/internal/jsonscan"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// HELM: a run folder (benchmark_output/runs/SUITE/RUN/) holds run_spec.json
// (the run's name, scenario, model and metrics), scenario.json (the
// scenario's name), per_instance_stats.json (a list of {instance_id,
// train_trial_index, stats: [{name: {name, split}, mean, ...}]}) and
// scenario_state.json ({request_states: [{instance: {id, input: {text}}}]}).

type helmRunSpec struct {
	Name         string `json:"name"`
	ScenarioSpec struct {
		Args map[string]json.RawMessage `json:"args"`
	} `json:"scenario_spec"`
	AdapterSpec struct {
		Model string `json:"model"`
	} `json:"adapter_spec"`
	MetricSpecs []struct {
		Args struct {
			Names []string `json:"names"`
		} `json:"args"`
	} `json:"metric_specs"`
}

// helmRun reads one run folder.
func (c *collector) helmRun(dir string) error {
	specPath := filepath.Join(dir, "run_spec.json")
	statsPath := filepath.Join(dir, "per_instance_stats.json")
	for _, p := range []string{specPath, statsPath} {
		if err := c.t.Check(p); err != nil {
			c.skip(dir, fmt.Sprintf("a HELM run not read: %v", err))
			return nil
		}
	}
	b, err := readDocument(specPath, 64<<20, "a HELM run spec")
	if err != nil {
		return err
	}
	var spec helmRunSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("%s: not a HELM run spec: %s", specPath, jsonError(b, err))
	}
	if spec.AdapterSpec.Model == "" {
		return fmt.Errorf("%s: key \"adapter_spec.model\": no model named", specPath)
	}
	task, scenario := helmNames(spec.Name, dir)
	scPath := filepath.Join(dir, "scenario.json")
	if err := c.t.Check(scPath); err == nil {
		if b, err := readDocument(scPath, 64<<20, "a HELM scenario"); err == nil {
			var sc struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(b, &sc) == nil && sc.Name != "" {
				scenario = sc.Name
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		c.skip(scPath, fmt.Sprintf("%v; the run's category is its run name's scenario", err))
	}
	category := scenario
	if args := helmArgs(spec.ScenarioSpec.Args); args != "" {
		category += ":" + args
	}
	metric, err := c.helmMetric(spec, specPath)
	if err != nil {
		return err
	}
	m := c.model(spec.AdapterSpec.Model)
	log := Log{Path: dir, Tool: HELM, Model: spec.AdapterSpec.Model, Task: task, Metric: metric}
	var miss missing
	total := 0
	needText := map[string]int32{}
	err = eachElement(statsPath, "", func(el []byte, k int) error {
		var id, perturbation, stats []byte
		trial := 0
		err := jsonscan.EachField(el, func(key, v []byte) bool {
			switch string(key) {
			case "instance_id":
				id = v
			case "perturbation":
				perturbation = v
			case "train_trial_index":
				x, _ := jsonscan.Number(v)
				trial = int(x)
			case "stats":
				stats = v
			}
			return true
		})
		if err != nil {
			return err
		}
		iid := jsonscan.ID(id)
		if iid == "" {
			return fmt.Errorf("key \"instance_id\": want a string")
		}
		if len(perturbation) > 0 && string(perturbation) != "null" {
			log.Passed++
			log.Why = "perturbed instances"
			return nil
		}
		total++
		x, found, err := helmStat(stats, metric)
		if err != nil {
			return fmt.Errorf("instance %s: %w", iid, err)
		}
		if !found {
			miss.add(fmt.Sprintf("%s (trial %d)", iid, trial))
			return nil
		}
		if err := checkScore(x, metric); err != nil {
			return err
		}
		i, need := c.item(HELM, task, iid, category)
		if need {
			needText[iid] = i
		}
		c.score(m, i, x, k)
		log.Samples++
		return nil
	})
	if err != nil {
		return err
	}
	if err := miss.err(statsPath, task, metric, "instance", total); err != nil {
		return err
	}
	if log.Samples == 0 {
		c.skip(dir, "a HELM run with no instances scored by "+metric)
		return nil
	}
	c.sum.Logs = append(c.sum.Logs, log)
	if len(needText) == 0 {
		return nil
	}
	statePath := filepath.Join(dir, "scenario_state.json")
	if err := c.t.Check(statePath); errors.Is(err, fs.ErrNotExist) {
		c.skip(statePath, "no scenario_state.json: the run's items have no text")
		return nil
	} else if err != nil {
		c.skip(statePath, fmt.Sprintf("%v; the run's items have no text", err))
		return nil
	}
	return eachElement(statePath, "request_states", func(el []byte, _ int) error {
		inst, err := jsonscan.Field(el, "instance")
		if err != nil || inst == nil {
			return err
		}
		rawID, err := jsonscan.Field(inst, "id")
		if err != nil {
			return err
		}
		i, ok := needText[jsonscan.ID(rawID)]
		if !ok {
			return nil
		}
		text, err := jsonscan.Path(inst, "input", "text")
		if err != nil {
			return err
		}
		if s, ok := jsonscan.Str(text); ok {
			c.setText(i, s)
		}
		return nil
	})
}

// helmNames splits a run name (scenario:arg=v,arg=v) into the task, the
// name without its model arguments (so runs of other models on the same
// instances share item ids), and the scenario.
func helmNames(name, dir string) (task, scenario string) {
	if name == "" {
		name = filepath.Base(dir)
	}
	scenario, args, _ := strings.Cut(name, ":")
	var keep []string
	for _, a := range strings.Split(args, ",") {
		if a == "" || strings.HasPrefix(a, "model=") || strings.HasPrefix(a, "model_deployment=") {
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return scenario, scenario
	}
	return scenario + ":" + strings.Join(keep, ","), scenario
}

// helmArgs renders a scenario's arguments as k=v,k=v in key order.
func helmArgs(args map[string]json.RawMessage) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		v, ok := jsonscan.Str(args[k])
		if !ok {
			v = string(args[k])
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// helmMetric is the first of --metric the run's specs name, else the run's
// main metric: the first its metric specs name.
func (c *collector) helmMetric(spec helmRunSpec, specPath string) (string, error) {
	var names []string
	for _, ms := range spec.MetricSpecs {
		names = append(names, ms.Args.Names...)
	}
	if len(c.opt.Metric) == 0 {
		if len(names) == 0 {
			return "", fmt.Errorf("%s: no metric names in metric_specs: name the stat with --metric (e.g. exact_match)", specPath)
		}
		return names[0], nil
	}
	for _, want := range c.opt.Metric {
		for _, n := range names {
			if n == want {
				return want, nil
			}
		}
	}
	// A stat may be computed without its name in the specs (exact_match@5):
	// the first of --metric is looked for in the stats.
	return c.opt.Metric[0], nil
}

// helmStat finds the unperturbed stat named metric in an instance's stats
// and returns its mean (sum over count when there is no mean).
func helmStat(stats []byte, metric string) (float64, bool, error) {
	var x float64
	found := false
	err := jsonscan.Elems(stats, func(st []byte) (bool, error) {
		name, err := jsonscan.Field(st, "name")
		if err != nil || name == nil {
			return true, err
		}
		n, _ := jsonscan.Field(name, "name")
		if s, _ := jsonscan.Str(n); s != metric {
			return true, nil
		}
		if p, _ := jsonscan.Field(name, "perturbation"); p != nil && string(p) != "null" {
			return true, nil
		}
		var mean, sum, count []byte
		if err := jsonscan.EachField(st, func(k, v []byte) bool {
			switch string(k) {
			case "mean":
				mean = v
			case "sum":
				sum = v
			case "count":
				count = v
			}
			return true
		}); err != nil {
			return false, err
		}
		if v, ok := jsonscan.Number(mean); ok {
			x, found = v, true
			return false, nil
		}
		for _, f := range []struct {
			key string
			raw []byte
		}{{"mean", mean}, {"sum", sum}, {"count", count}} {
			if why := notNumber(f.raw); why != "" {
				return false, fmt.Errorf("stat %q: key %q: %s", metric, f.key, why)
			}
		}
		s, ok1 := jsonscan.Number(sum)
		n2, ok2 := jsonscan.Number(count)
		if ok1 && ok2 && n2 > 0 {
			x, found = s/n2, true
			return false, nil
		}
		return false, fmt.Errorf("stat %q has neither a mean nor a sum and count", metric)
	})
	return x, found, err
}

// eachElement streams the elements of a JSON array: the whole document
// when key is "", else the value of key in the top-level object (the values
// before it are passed over, not held). fn gets each element's raw bytes
// (valid until it returns) and its 1-based index; its error is given the
// file and the element's place.
func eachElement(p, key string, fn func(el []byte, k int) error) error {
	in, err := fileio.OpenInput(p)
	if err != nil {
		return err
	}
	defer in.Close()
	skipBOM(in)
	s := jsonscan.NewStream(in)
	k := 0
	where := func(err error) error {
		at := fmt.Sprintf("element %d", k)
		if key != "" {
			at = fmt.Sprintf("%s[%d]", key, k-1)
		}
		if k == 0 {
			at = "the document"
		}
		return &cell.ParseError{File: p, Msg: fmt.Sprintf("%s (byte %d): %v", at, s.Offset(), err), Err: err}
	}
	if key != "" {
		found, err := s.Enter(key)
		if err != nil {
			return where(err)
		}
		if !found {
			return &cell.ParseError{File: p, Msg: fmt.Sprintf("no key %q in the top-level object", key)}
		}
	}
	if err := s.EachElem(func(el []byte, i int) error {
		k = i + 1
		return fn(el, k)
	}); err != nil {
		return where(err)
	}
	return nil
}
