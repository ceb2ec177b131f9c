package sweeprun

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/yamlerr"
	"github.com/jeirt/jeirt/train/pipeline"
	"github.com/jeirt/jeirt/train/sweep"
	"gopkg.in/yaml.v3"
)

// Sweep is a grid of `jeirt train` runs, read from a sweep file:
//
//	name: swe-dims                 # Slurm job name; default jeirt-sweep
//	base: quickstart.yaml          # the training config every run starts from
//	grid:                          # every combination of these values is one run
//	  model.dim: [64, 128]
//	  train.lr: [3.0e-5, 5.0e-5]
//	seeds: [1, 2]                  # train.seed values, innermost loop; optional
//	set: {train.epochs: 5}         # fixed overrides for every run; optional
//	baselines: false               # also score the baselines in each run
//	slurm: {partition: gpu, gpus: 1, cpus: 8, mem: 32G, time: "04:00:00"}
//
// Runs are numbered in the order of the grid as written, the last key (then
// the seed) varying fastest. Run k writes only the folder runs/NNN/ of the
// sweep folder, so Slurm array tasks never write the same file.
type Sweep struct {
	Name      string
	Base      string          // the base training config, resolved against the sweep file's folder
	Grid      []GridKey       // in file order
	Seeds     []int64         // values of train.seed; empty keeps the base config's
	Set       []sweep.Setting // fixed overrides applied to every run before the grid values
	Baselines bool            // score the baselines in each run (slower; off by default)
	Slurm     SlurmSettings

	Source string // the sweep file, for error messages
	dir    string // the sweep file's folder, absolute; relative paths in grid and set are resolved against it
}

// GridKey is one config key and the values the sweep gives it.
type GridKey struct {
	Key    string
	Values []string // YAML scalars as written, parsed by Config.Set
}

// SlurmSettings are the resources of each array task. Flags of `jeirt sweep`
// override them.
type SlurmSettings struct {
	Partition   string   `yaml:"partition"`    // --partition; empty leaves the cluster default
	Account     string   `yaml:"account"`      // --account
	QOS         string   `yaml:"qos"`          // --qos
	Constraint  string   `yaml:"constraint"`   // --constraint, e.g. a100
	GPUs        int      `yaml:"gpus"`         // --gres=gpu:N; default 1
	CPUs        int      `yaml:"cpus"`         // --cpus-per-task; default 4
	Mem         string   `yaml:"mem"`          // --mem; default 16G
	Time        string   `yaml:"time"`         // --time; default 02:00:00
	MaxParallel int      `yaml:"max_parallel"` // at most this many tasks at once (--array=0-N%K); 0 = no limit
	Jeirt       string   `yaml:"jeirt"`        // the jeirt binary on the cluster; default jeirt (from PATH)
	Setup       []string `yaml:"setup"`        // shell lines run before training, e.g. module load cuda
}

var (
	sweepKeys = []string{"name", "base", "grid", "seeds", "set", "baselines", "slurm"}
	slurmKeys = []string{"partition", "account", "qos", "constraint", "gpus", "cpus", "mem", "time", "max_parallel", "jeirt", "setup"}
)

// DefaultSlurm holds the resources used when the sweep file names none.
func DefaultSlurm() SlurmSettings {
	return SlurmSettings{GPUs: 1, CPUs: 4, Mem: "16G", Time: "02:00:00", Jeirt: "jeirt"}
}

// LoadSweep reads and validates a sweep file: unknown keys, malformed values
// and config keys the trainer does not know are errors naming the file, line
// and key. The base config is loaded and every run's config validated.
func LoadSweep(path string) (*Sweep, error) {
	raw, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "a sweep file")
	if err != nil {
		return nil, err
	}
	s, err := ParseSweep(raw, path)
	if err != nil {
		return nil, err
	}
	// Run configs are read from the sweep folder (and on cluster nodes), so
	// every path in them is made absolute.
	if s.dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(s.Base) {
		s.Base = filepath.Join(s.dir, s.Base)
	}
	if _, err := s.Runs("sweep"); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseSweep decodes a sweep file without loading the base config; source
// names it in errors.
func ParseSweep(raw []byte, source string) (*Sweep, error) {
	s := &Sweep{Name: "jeirt-sweep", Slurm: DefaultSlurm(), Source: source}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, yamlerr.Wrap(err, raw, source)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: a sweep file is a mapping with keys %s", source, strings.Join(sweepKeys, ", "))
	}
	at := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", source, n.Line, fmt.Sprintf(format, args...))
	}
	top := doc.Content[0]
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if !slices.Contains(sweepKeys, k.Value) {
			return nil, at(k, "unknown key %s (known keys: %s)", limits.Clip(k.Value), strings.Join(sweepKeys, ", "))
		}
		if seen[k.Value] {
			return nil, at(k, "key %s given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			if v.Kind != yaml.ScalarNode || !validJobName(v.Value) {
				return nil, at(v, "name must be letters, digits, '-', '_' or '.', got %q", limits.Clip(v.Value))
			}
			s.Name = v.Value
		case "base":
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				return nil, at(v, "base must be the path of a training config")
			}
			s.Base = v.Value
		case "baselines":
			if err := v.Decode(&s.Baselines); err != nil || v.Kind != yaml.ScalarNode {
				return nil, at(v, "baselines must be true or false, got %q", limits.Clip(v.Value))
			}
		case "seeds":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return nil, at(v, "seeds must be a non-empty list of integers, e.g. [1, 2, 3]")
			}
			have := map[int64]bool{}
			for _, e := range v.Content {
				n, err := strconv.ParseInt(e.Value, 10, 64)
				if err != nil || e.Kind != yaml.ScalarNode {
					return nil, at(e, "seeds: %q is not an integer", limits.Clip(e.Value))
				}
				if have[n] {
					return nil, at(e, "seeds: %d is listed twice", n)
				}
				have[n] = true
				s.Seeds = append(s.Seeds, n)
			}
		case "grid":
			if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
				return nil, at(v, "grid must map config keys to lists of values, e.g. {model.dim: [64, 128]}")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				gk, gv := v.Content[j], v.Content[j+1]
				g := GridKey{Key: gk.Value}
				switch gv.Kind {
				case yaml.ScalarNode:
					g.Values = []string{gv.Value}
				case yaml.SequenceNode:
					if len(gv.Content) == 0 {
						return nil, at(gv, "grid: %s has no values", limits.Clip(gk.Value))
					}
					have := map[string]bool{}
					for _, e := range gv.Content {
						if e.Kind != yaml.ScalarNode {
							return nil, at(e, "grid: %s: each value must be a single value", limits.Clip(gk.Value))
						}
						if have[e.Value] {
							return nil, at(e, "grid: %s: value %s is listed twice", limits.Clip(gk.Value), limits.Clip(e.Value))
						}
						have[e.Value] = true
						g.Values = append(g.Values, e.Value)
					}
				default:
					return nil, at(gv, "grid: %s must be a list of values", limits.Clip(gk.Value))
				}
				if err := checkSweepKey(g.Key); err != nil {
					return nil, at(gk, "grid: %v", err)
				}
				for _, prev := range s.Grid {
					if prev.Key == g.Key {
						return nil, at(gk, "grid: key %s given twice", limits.Clip(g.Key))
					}
				}
				s.Grid = append(s.Grid, g)
			}
		case "set":
			if v.Kind != yaml.MappingNode {
				return nil, at(v, "set must map config keys to single values, e.g. {train.epochs: 5}")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				sk, sv := v.Content[j], v.Content[j+1]
				if sv.Kind != yaml.ScalarNode {
					return nil, at(sv, "set: %s must be a single value", limits.Clip(sk.Value))
				}
				if err := checkSweepKey(sk.Value); err != nil {
					return nil, at(sk, "set: %v", err)
				}
				s.Set = append(s.Set, sweep.Setting{Key: sk.Value, Value: sv.Value})
			}
		case "slurm":
			if err := decodeSlurm(v, &s.Slurm, source); err != nil {
				return nil, err
			}
		}
	}
	runs := 1
	for _, g := range s.Grid {
		runs = mulRuns(runs, len(g.Values))
	}
	if len(s.Seeds) > 0 {
		runs = mulRuns(runs, len(s.Seeds))
	}
	if runs > sweep.MaxRuns {
		return nil, fmt.Errorf("%s: the grid and seeds make more than %d runs, the most a sweep may have", source, sweep.MaxRuns)
	}
	if s.Base == "" {
		return nil, fmt.Errorf("%s: base is required (the training config every run starts from)", source)
	}
	for _, g := range s.Grid {
		if g.Key == "train.seed" && len(s.Seeds) > 0 {
			return nil, fmt.Errorf("%s: train.seed is both in grid and in seeds; use one", source)
		}
		for _, st := range s.Set {
			if st.Key == g.Key {
				return nil, fmt.Errorf("%s: %s is both in grid and in set; use one", source, g.Key)
			}
		}
	}
	for _, st := range s.Set {
		if st.Key == "train.seed" && len(s.Seeds) > 0 {
			return nil, fmt.Errorf("%s: train.seed is both in set and in seeds; use one", source)
		}
	}
	return s, nil
}

// checkSweepKey rejects keys a sweep may not set and keys the trainer does
// not know.
func checkSweepKey(key string) error {
	if key == "output" {
		return fmt.Errorf("output cannot be set: each run writes runs/NNN/checkpoint in the sweep folder")
	}
	err := pipeline.DefaultConfig().CheckKey(key)
	return err
}

func decodeSlurm(n *yaml.Node, dst *SlurmSettings, source string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: slurm must be a mapping with keys %s", source, n.Line, strings.Join(slurmKeys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(slurmKeys, k.Value) {
			return fmt.Errorf("%s:%d: unknown key slurm.%s (known keys: %s)", source, k.Line, k.Value, strings.Join(slurmKeys, ", "))
		}
		if k.Value == "setup" && v.Kind == yaml.ScalarNode {
			dst.Setup = strings.Split(strings.TrimRight(v.Value, "\n"), "\n")
			continue
		}
		if k.Value != "setup" && v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s:%d: slurm.%s must be a single value", source, v.Line, k.Value)
		}
		wrap := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}
		if err := wrap.Decode(dst); err != nil {
			return fmt.Errorf("%s:%d: slurm.%s: %q is not valid here", source, v.Line, k.Value, v.Value)
		}
	}
	return dst.Validate(source)
}

// Validate checks the resources and names the first bad key.
func (s SlurmSettings) Validate(source string) error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: slurm.%s: %s", source, key, fmt.Sprintf(format, args...))
	}
	switch {
	case s.GPUs < 0 || s.GPUs > MaxGPUs:
		return bad("gpus", "must be from 0 to %d (a node's), got %d", MaxGPUs, s.GPUs)
	case s.CPUs < 1 || s.CPUs > MaxCPUs:
		return bad("cpus", "must be from 1 to %d (a node's), got %d", MaxCPUs, s.CPUs)
	case s.MaxParallel < 0 || s.MaxParallel > sweep.MaxRuns:
		return bad("max_parallel", "must be from 0 (no limit) to the number of runs, got %d", s.MaxParallel)
	case strings.TrimSpace(s.Jeirt) == "" || strings.ContainsAny(s.Jeirt, "\"$`\\\n"):
		return bad("jeirt", "must name the jeirt binary (no quotes, $ or backslashes), got %q", s.Jeirt)
	}
	if s.Mem != "" && !validMem(s.Mem) {
		return bad("mem", "must be a size such as 16G or 32000M, got %q", s.Mem)
	}
	if s.Time != "" && !validTime(s.Time) {
		return bad("time", "must be minutes, HH:MM:SS or D-HH:MM:SS, got %q", s.Time)
	}
	for k, v := range map[string]string{"partition": s.Partition, "account": s.Account, "qos": s.QOS, "constraint": s.Constraint} {
		if strings.ContainsAny(v, " \t\n\r'\"$`\\#") {
			return bad(k, "must not contain spaces, quotes or shell characters, got %q", v)
		}
	}
	return nil
}

func validJobName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func validMem(s string) bool {
	num := strings.TrimRight(s, "KMGTkmgt")
	if len(s)-len(num) > 1 {
		return false
	}
	_, err := strconv.ParseUint(num, 10, 64)
	return err == nil
}

func validTime(s string) bool {
	day, rest, hasDay := strings.Cut(s, "-")
	if hasDay {
		if _, err := strconv.ParseUint(day, 10, 32); err != nil {
			return false
		}
	} else {
		rest = s
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}

// SweepRun is one run of a sweep.
type SweepRun struct {
	Index    int
	ID       string           // zero-padded index: the folder runs/ID
	Settings []sweep.Setting  // the grid values (and seed) of this run, in grid order
	Config   *pipeline.Config // the full training config, Output = <dir>/runs/ID/checkpoint
}

// MaxGPUs and MaxCPUs bound what one task may ask of its node.
const (
	MaxGPUs = 64
	MaxCPUs = 4096
)

// mulRuns is a*b, or sweep.MaxRuns+1 when that is more than sweep.MaxRuns.
func mulRuns(a, b int) int {
	if b != 0 && a > sweep.MaxRuns/b {
		return sweep.MaxRuns + 1
	}
	return min(a*b, sweep.MaxRuns+1)
}

// Size is the number of runs.
func (s *Sweep) Size() int {
	n := 1
	for _, g := range s.Grid {
		n *= len(g.Values)
	}
	if len(s.Seeds) > 0 {
		n *= len(s.Seeds)
	}
	return n
}

// Keys lists the varied keys in grid order, then train.seed when seeds are given.
func (s *Sweep) Keys() []string {
	var keys []string
	for _, g := range s.Grid {
		keys = append(keys, g.Key)
	}
	if len(s.Seeds) > 0 {
		keys = append(keys, "train.seed")
	}
	return keys
}

// RunID formats run index i of an n-run sweep: at least three digits, more
// when n needs them.
func RunID(i, n int) string {
	w := len(strconv.Itoa(n - 1))
	if w < 3 {
		w = 3
	}
	return fmt.Sprintf("%0*d", w, i)
}

// Runs expands the grid against the base config. dir is the sweep folder;
// each run's Output is dir/runs/ID/checkpoint. Every run's config is
// validated, and an error names the run and its settings.
func (s *Sweep) Runs(dir string) ([]SweepRun, error) {
	base, err := pipeline.LoadConfig(s.Base)
	if err != nil {
		return nil, fmt.Errorf("%s: base: %w", s.Source, err)
	}
	axes := make([][]string, 0, len(s.Grid)+1)
	keys := s.Keys()
	for _, g := range s.Grid {
		axes = append(axes, g.Values)
	}
	if len(s.Seeds) > 0 {
		seeds := make([]string, len(s.Seeds))
		for k, v := range s.Seeds {
			seeds[k] = strconv.FormatInt(v, 10)
		}
		axes = append(axes, seeds)
	}
	n := s.Size()
	runs := make([]SweepRun, n)
	for i := 0; i < n; i++ {
		// Mixed-radix digits of i, the last axis varying fastest.
		settings := make([]sweep.Setting, len(axes))
		rest := i
		for a := len(axes) - 1; a >= 0; a-- {
			settings[a] = sweep.Setting{Key: keys[a], Value: axes[a][rest%len(axes[a])]}
			rest /= len(axes[a])
		}
		id := RunID(i, n)
		c := *base
		c.Source = fmt.Sprintf("%s: run %s (%s)", s.Source, id, sweep.FormatSettings(settings))
		for _, st := range append(append([]sweep.Setting{}, s.Set...), settings...) {
			if err := c.Set(st.Key, st.Value); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Source, err)
			}
		}
		for _, k := range pipeline.PathKeys {
			p := c.StringField(k)
			if *p == "" || filepath.IsAbs(*p) {
				continue
			}
			if s.dir != "" && *p != *base.StringField(k) {
				*p = filepath.Join(s.dir, *p) // set by the sweep file: relative to it
			}
			abs, err := filepath.Abs(*p)
			if err != nil {
				return nil, err
			}
			*p = abs
		}
		c.Output = filepath.Join(dir, "runs", id, "checkpoint")
		if err := c.Validate(); err != nil {
			return nil, err
		}
		runs[i] = SweepRun{Index: i, ID: id, Settings: settings, Config: &c}
	}
	return runs, nil
}

// RunConfigYAML is the config file of a run, as `jeirt train --config` reads
// it: output is relative ("checkpoint", next to the file), data paths are
// absolute as resolved from the base config.
func RunConfigYAML(r SweepRun, sweepSource string) ([]byte, error) {
	c := *r.Config
	c.Output = "checkpoint"
	body, err := yaml.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Run %s of the sweep %s: %s\n", r.ID, sweepSource, sweep.FormatSettings(r.Settings))
	fmt.Fprintf(&b, "# Train it alone with: jeirt train --config runs/%s/config.yaml --force\n", r.ID)
	b.Write(body)
	return b.Bytes(), nil
}

// Manifest describes the runs for sweep.json.
func (s *Sweep) Manifest(runs []SweepRun) sweep.Manifest {
	m := sweep.Manifest{Format: sweep.Format, Version: 1, Source: s.Source, Base: s.Base, Keys: s.Keys(), Slurm: s.Slurm}
	for _, r := range runs {
		m.Runs = append(m.Runs, sweep.RunSummary{ID: r.ID, Dir: filepath.Join("runs", r.ID), Settings: r.Settings})
	}
	return m
}

// Override sets the fields of s whose command-line flag was given (changed
// reports it by flag name: partition, account, qos, constraint, gpus, cpus,
// mem, time, max-parallel, jeirt) to their values in from.
func (s *SlurmSettings) Override(from SlurmSettings, changed func(flag string) bool) {
	for _, f := range []struct {
		name string
		set  func()
	}{
		{"partition", func() { s.Partition = from.Partition }},
		{"account", func() { s.Account = from.Account }},
		{"qos", func() { s.QOS = from.QOS }},
		{"constraint", func() { s.Constraint = from.Constraint }},
		{"gpus", func() { s.GPUs = from.GPUs }},
		{"cpus", func() { s.CPUs = from.CPUs }},
		{"mem", func() { s.Mem = from.Mem }},
		{"time", func() { s.Time = from.Time }},
		{"max-parallel", func() { s.MaxParallel = from.MaxParallel }},
		{"jeirt", func() { s.Jeirt = from.Jeirt }},
	} {
		if changed(f.name) {
			f.set()
		}
	}
}
