package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/model/yamlerr"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/jeirt"
	"github.com/jeirt/jeirt/train/route"
)

// Config is a `jeirt train` run: where the responses come from, how they are
// split, which text encoder turns question text into vectors, the JE-IRT model
// shape and the training schedule. The zero value is not useful; start from
// DefaultConfig or LoadConfig, which fill every default below.
type Config struct {
	Data    DataConfig    `yaml:"data" json:"data"`
	Split   SplitConfig   `yaml:"split" json:"split"`
	Encoder EncoderConfig `yaml:"encoder" json:"encoder"`
	Model   ModelConfig   `yaml:"model" json:"model"`
	Train   TrainConfig   `yaml:"train" json:"train"`
	Route   RouteConfig   `yaml:"route" json:"route"`
	// Output is the checkpoint folder to write. Required.
	Output string `yaml:"output" json:"output"`

	// Source names the config in error messages (the file path, or "config").
	Source string `yaml:"-" json:"-"`
}

// DataConfig says where the responses are: one Responses file split by Split,
// or three given files (the EmbedLLM layout).
type DataConfig struct {
	Responses string `yaml:"responses" json:"responses,omitempty"` // one responses file, split by Split
	Items     string `yaml:"items" json:"items,omitempty"`         // optional item-text CSV (item_id,text)
	Format    string `yaml:"format" json:"format"`                 // as read.Options.Format; default auto
	// Duplicates and Graded are read.Options': repeated rows (majority,
	// first, error, trials) and fractional labels as graded scores.
	Duplicates string `yaml:"duplicates" json:"duplicates,omitempty"`
	Graded     bool   `yaml:"graded" json:"graded,omitempty"`
	// Columns and Delimiter are read.Options': the columns of a long file
	// whose header jeirt does not know ("model=Model Name,item=Question,
	// label=Score") and the field separator (, ; | tab).
	Columns   string `yaml:"columns" json:"columns,omitempty"`
	Delimiter string `yaml:"delimiter" json:"delimiter,omitempty"`
	Train     string `yaml:"train" json:"train,omitempty"` // given split: all three of train, val, test
	Val       string `yaml:"val" json:"val,omitempty"`
	Test      string `yaml:"test" json:"test,omitempty"`

	// Benchmark, Condition and ScoreMap are read.Options': what is read of
	// a measurement-db tree (the benchmarks, separated by commas, all for
	// every one; the test_condition; a continuous_unbounded response's
	// mapping).
	Benchmark string `yaml:"benchmark" json:"benchmark,omitempty"`
	Condition string `yaml:"condition" json:"condition,omitempty"`
	ScoreMap  string `yaml:"score_map" json:"score_map,omitempty"`
}

// SplitConfig is how data.responses is split into train, validation and test cells.
type SplitConfig struct {
	Val  float64 `yaml:"val" json:"val"`   // fraction held out for validation; default 0.1
	Test float64 `yaml:"test" json:"test"` // fraction held out for test; default 0.1
	Seed int64   `yaml:"seed" json:"seed"` // default 42
	By   string  `yaml:"by" json:"by"`     // cell|model|item|benchmark; default cell
	// Hold, with by: benchmark, names the held-out benchmarks (item groups:
	// the category or benchmark column of data.items), separated by commas;
	// empty draws round(test·G) of the G benchmarks.
	Hold string `yaml:"hold" json:"hold,omitempty"`
	// OnboardFraction is, with by: model, the fraction of each held-out
	// model's cells its row is fitted on (the add-model fit, the trained
	// model frozen); the rest are scored. Default 0.1.
	OnboardFraction float64 `yaml:"onboard_fraction" json:"onboard_fraction"`
	// Joint, with by: model, also trains a second model on the training
	// models plus the held-out models' onboarding cells and scores the
	// held-out models' rows of that joint fit on the same cells, for
	// comparison with onboarding. Default false (it doubles training time).
	Joint bool `yaml:"joint" json:"joint,omitempty"`
}

// EncoderConfig chooses the frozen text encoder.
type EncoderConfig struct {
	Spec  string `yaml:"spec" json:"spec"`             // as in `jeirt encode`: hash, hash:DIM, tfidf, tfidf:DIM, hf:ORG/NAME, a model folder (relative to the config), precomputed:FILE; default hash
	Cache string `yaml:"cache" json:"cache,omitempty"` // optional folder caching encoded vectors (encoder.Cache)
}

// ModelConfig is the JE-IRT shape.
type ModelConfig struct {
	Dim     int     `yaml:"dim" json:"dim"`         // d, the embedding size; default 256
	Hidden  int     `yaml:"hidden" json:"hidden"`   // adapter hidden width; 0 (default) means 2D
	Dropout float64 `yaml:"dropout" json:"dropout"` // adapter dropout; default 0.5
	// Residual, when positive, adds a free per-question vector r_j to the adapter
	// output and is the weight of its L2 penalty; 0 (default) turns it off.
	Residual float64 `yaml:"residual" json:"residual"`
}

// TrainConfig is the optimisation schedule (AdamW with a per-epoch step decay).
//
// The defaults were chosen on validation loss on SWE-bench Verified and
// RewardBench (docs/training.md has the sweep). Preset "reference" starts
// instead from the JE-IRT reference implementation's settings (lr 5e-5,
// gamma 0.75, weight decay 0.01; see ReferenceTrain), which on benchmarks of
// a few hundred questions stop learning before the learning rate has done
// its work.
type TrainConfig struct {
	// Preset is "" (the defaults below) or "reference" (ReferenceTrain's
	// settings for every train key the config does not give).
	Preset      string  `yaml:"preset" json:"preset,omitempty"`
	Epochs      int     `yaml:"epochs" json:"epochs"`             // default 100
	BatchSize   int     `yaml:"batch_size" json:"batch_size"`     // pairs per step; default 512
	LR          float64 `yaml:"lr" json:"lr"`                     // default 1e-3
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"` // AdamW decoupled decay; default 0.3
	Gamma       float64 `yaml:"gamma" json:"gamma"`               // LR multiplier per epoch; default 0.97
	Patience    int     `yaml:"patience" json:"patience"`         // epochs without a better val loss before stopping; default 10
	Seed        int64   `yaml:"seed" json:"seed"`                 // default 42
	Device      string  `yaml:"device" json:"device"`             // auto|cpu|cpu:fused|cuda (backend.Resolve); default auto
	Step        string  `yaml:"step" json:"step,omitempty"`       // retired: the CPU step is train.device (cpu or cpu:fused)
	Batching    string  `yaml:"batching" json:"batching"`         // by-question|per-pair; default by-question
}

// RouteConfig is how jeirt train chooses the checkpoint's default routing
// rule (the rule jeirt route, route eval and serve apply when none is asked
// for) and calibrates its out-of-domain check.
type RouteConfig struct {
	// Folds is K of the K-fold cross-validation over the training
	// questions that scores best-single, max-p, the shortlists, the margins
	// and (with costs) the λ rules (route.CrossValidation); 0 skips it and
	// records best-single. Default 5.
	Folds int `yaml:"folds" json:"folds"`
	// Repeats is how many times the questions are dealt into folds anew;
	// each question's outcome is its mean over the repeats. Default 1.
	Repeats int `yaml:"repeats" json:"repeats"`
	// Guard is how the cross-validated scores choose the rule (route.Choose):
	// one-se (the default: of the rules within one standard error of the
	// best, the one that departs least from best-single), se (the best, if
	// it beats best-single by more than its standard error) or
	// reality-check (the same, the bar raised for the best of all
	// candidates by resampling the questions).
	Guard string `yaml:"guard" json:"guard"`
	// Refit is how each fold's model is trained, always from scratch on the
	// other folds' questions: best-epoch (default) for the main run's best
	// epoch count with no validation, so the K folds cost about
	// (K−1)·best/(best+patience) main runs; early-stop as the main run,
	// early stopping on its validation cells of the questions outside the
	// fold (about K−1 main runs).
	Refit string `yaml:"refit" json:"refit"`
	// Calibrate fits the router's calibrated P in the cross-validation
	// (route.Calibration: the JE-IRT logit blended with each model's
	// training-accuracy logit, the weights fitted on the folds' held-out
	// predictions), records it, and scores the rules with it; false keeps
	// the map's own P. Default false: it lifted max-p and the large
	// shortlists on development splits, not the recorded default rule.
	Calibrate bool `yaml:"calibrate" json:"calibrate"`
	// FalseFlagRate is the stated false-flag rate of the out-of-domain
	// check: the conformal threshold flags at most this share of new
	// questions like the training ones. Default 0.05.
	FalseFlagRate float64 `yaml:"false_flag_rate" json:"false_flag_rate"`
	// Costs is an optional model,cost CSV: the λ rules become candidates
	// and the prices are recorded with the rule.
	Costs string `yaml:"costs" json:"costs,omitempty"`
}

// Refit modes of RouteConfig.
const (
	RefitBestEpoch = "best-epoch"
	RefitEarlyStop = "early-stop"
)

// DefaultConfig returns a Config holding every default: the trainer's own
// (jeirt.Trainer.WithDefaults, where they are written), and the config's
// split, encoder and seeds.
func DefaultConfig() *Config {
	t := jeirt.Trainer{}.WithDefaults(0)
	return &Config{
		Data:    DataConfig{Format: "auto"},
		Split:   SplitConfig{Val: 0.1, Test: 0.1, Seed: 42, By: "cell", OnboardFraction: 0.1},
		Encoder: EncoderConfig{Spec: "hash"},
		Model:   ModelConfig{Dim: t.Dim, Hidden: 0, Dropout: t.Dropout},
		Train: TrainConfig{Epochs: t.Epochs, BatchSize: t.BatchSize, LR: t.LR, WeightDecay: t.WeightDecay, Gamma: t.Gamma,
			Patience: t.Patience, Seed: 42, Device: backend.Auto, Batching: t.Batching},
		Route:  RouteConfig{Folds: route.DefaultFolds, Repeats: 1, Guard: route.GuardOneSE, Refit: RefitBestEpoch, FalseFlagRate: checkpoint.DefaultFalseFlagRate},
		Source: "config",
	}
}

// ReferenceTrain is preset "reference": the training settings of the JE-IRT
// reference implementation (AdamW lr 5e-5, weight decay 0.01, the learning
// rate multiplied by 0.75 after every epoch, batches of 512, 100 epochs,
// patience 10).
func ReferenceTrain() TrainConfig {
	return TrainConfig{Preset: "reference", Epochs: 100, BatchSize: 512, LR: 5e-5, WeightDecay: 0.01, Gamma: 0.75,
		Patience: 10, Seed: 42, Device: "auto", Batching: "by-question"}
}

// applyPreset replaces the train settings with the preset's.
func (c *Config) applyPreset(name string) error {
	switch name {
	case "":
		c.Train = DefaultConfig().Train
	case "reference":
		c.Train = ReferenceTrain()
	default:
		return fmt.Errorf("train.preset: must be reference (or empty for the defaults), got %q", name)
	}
	return nil
}

// PathKeys are the config keys resolved against the config file's folder when relative.
var PathKeys = []string{"data.responses", "data.items", "data.train", "data.val", "data.test", "encoder.cache", "route.costs", "output"}

// LoadConfig reads a YAML config on top of DefaultConfig. Unknown keys are errors
// naming the key and line; every value is validated; relative paths are resolved
// against the config file's folder.
func LoadConfig(path string) (*Config, error) { return LoadConfigSet(path, nil) }

// LoadConfigSet is LoadConfig with overrides ("key=value", as SetAll takes
// them) applied before the config is validated, so an override can supply
// or fix a key the file gets wrong.
func LoadConfigSet(path string, overrides []string) (*Config, error) {
	c, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	if err := c.SetAll(overrides); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadConfig reads a YAML config on top of DefaultConfig and resolves its
// relative paths against the file's folder, without validating it: for a
// caller that sets keys of its own (jeirt route eval --splits sets the data
// and the split) before Validate.
func ReadConfig(path string) (*Config, error) {
	raw, err := fileio.ReadInputFile(path, fileio.MaxDocumentBytes, "a config")
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(raw, path)
	if err != nil {
		return nil, err
	}
	c.resolvePaths(filepath.Dir(path))
	return c, nil
}

// ParseConfig decodes YAML onto DefaultConfig without validating or resolving
// paths; source names the config in error messages.
func ParseConfig(raw []byte, source string) (*Config, error) {
	c := DefaultConfig()
	c.Source = source
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, yamlerr.Wrap(err, raw, source)
	}
	if len(doc.Content) == 0 {
		return c, nil // empty file: all defaults
	}
	lineKeys := map[int]string{}
	if err := checkKeys(doc.Content[0], reflect.TypeOf(*c), "", source, lineKeys); err != nil {
		return nil, err
	}
	if preset, line := findPreset(doc.Content[0]); preset != "" {
		// The preset's settings first, then whatever the file gives on top.
		if err := c.applyPreset(preset); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", source, line, err)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, explainYAMLError(err, source, lineKeys)
	}
	return c, nil
}

// checkKeys walks a mapping node and reports the first key that t has no field
// for, as "file:line: unknown key a.b (known: ...)", and the first value that
// does not decode into its field, as "file:line:column: a.b: cannot unmarshal
// ...". It records which key sits on which line for any other error yaml's
// decoder gives.
func checkKeys(n *yaml.Node, t reflect.Type, prefix, source string, lineKeys map[int]string) error {
	if n.Kind != yaml.MappingNode {
		what := "the config"
		if prefix != "" {
			what = prefix
		}
		return fmt.Errorf("%s:%d:%d: %s must be a mapping of keys to values", source, n.Line, n.Column, what)
	}
	fields := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if prefix != "" {
			key = prefix + "." + k.Value
		}
		f, ok := fields[k.Value]
		if !ok {
			known := make([]string, 0, len(fields))
			for name := range fields {
				known = append(known, name)
			}
			sort.Strings(known)
			return fmt.Errorf("%s:%d: unknown key %s (known keys here: %s)", source, k.Line, key, strings.Join(known, ", "))
		}
		lineKeys[v.Line] = key
		if f.Type.Kind() == reflect.Struct {
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue
			}
			if err := checkKeys(v, f.Type, key, source, lineKeys); err != nil {
				return err
			}
		} else if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s:%d:%d: %s must be a single value", source, v.Line, v.Column, key)
		} else if err := v.Decode(reflect.New(f.Type).Interface()); err != nil {
			// Decoded value by value, so that an error names the value's own
			// key, line and column, also in flow style ({lr: fast, patience: 3}),
			// where yaml.v3 gives only the line.
			msg := err.Error()
			var te *yaml.TypeError
			if errors.As(err, &te) && len(te.Errors) > 0 {
				msg = te.Errors[0]
				if m := yamlLine.FindStringSubmatch(msg); m != nil {
					msg = m[2]
				}
			}
			return fmt.Errorf("%s:%d:%d: %s: %s", source, v.Line, v.Column, key, msg)
		}
	}
	return nil
}

// findPreset returns the value of train.preset in a config mapping and its line.
func findPreset(n *yaml.Node) (string, int) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "train" || n.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		t := n.Content[i+1]
		for k := 0; k+1 < len(t.Content); k += 2 {
			if t.Content[k].Value == "preset" {
				return t.Content[k+1].Value, t.Content[k+1].Line
			}
		}
	}
	return "", 0
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		out[name] = f
	}
	return out
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// explainYAMLError turns yaml.v3's "line 5: cannot unmarshal !!str `x` into
// float64" into "config.yaml:5: train.lr: cannot unmarshal ...".
func explainYAMLError(err error, source string, lineKeys map[int]string) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", source, err)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := yamlLine.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			if key, ok := lineKeys[line]; ok {
				msgs = append(msgs, fmt.Sprintf("%s:%d: %s: %s", source, line, key, m[2]))
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s:%d: %s", source, line, m[2]))
			continue
		}
		msgs = append(msgs, fmt.Sprintf("%s: %s", source, e))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

func (c *Config) resolvePaths(base string) {
	c.Encoder.Spec = encoder.ResolveSpec(c.Encoder.Spec, base)
	for _, k := range PathKeys {
		p := c.StringField(k)
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
}

// CheckInputs reports the first input file of the config (data, items,
// costs) that does not exist, by its key; one inside the config's own
// folder is said to have been resolved against it, since a config's
// relative paths are relative to its folder, not to the working directory.
func (c *Config) CheckInputs() error {
	dir := filepath.Dir(c.Source)
	for _, k := range PathKeys {
		p := *c.StringField(k)
		if p == "" || k == "output" || k == "encoder.cache" {
			continue
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		msg := fmt.Sprintf("%s: %s: %s does not exist", c.Source, k, p)
		if fi, err := os.Stat(c.Source); err == nil && !fi.IsDir() && dir != "." {
			if rel, err := filepath.Rel(dir, p); err == nil {
				msg += fmt.Sprintf(" (a path written in the config is resolved against the config's folder %s, not the working directory: there it reads %s)", dir, rel)
			}
		}
		return errors.New(msg)
	}
	return nil
}

// Inputs are the files and folders a run of the config reads: the config
// file itself, its data files, its encoder's files and its encoder cache
// (for the output rule, model.CheckOutput).
func (c *Config) Inputs() []string {
	in := []string{c.Data.Responses, c.Data.Items, c.Data.Train, c.Data.Val, c.Data.Test, c.Encoder.Cache, c.Route.Costs}
	if fi, err := os.Stat(c.Source); err == nil && !fi.IsDir() {
		in = append(in, c.Source)
	}
	spec := strings.TrimPrefix(c.Encoder.Spec, "precomputed:")
	if _, err := os.Stat(spec); err == nil {
		in = append(in, spec)
	}
	return in
}

// StringField returns the string setting at a dotted key (one of PathKeys, say).
func (c *Config) StringField(key string) *string {
	v, err := c.field(key)
	if err != nil {
		panic(err)
	}
	return v.Addr().Interface().(*string)
}

// CheckKey reports whether key (dotted, such as "train.lr") names a setting.
func (c *Config) CheckKey(key string) error {
	_, err := c.field(key)
	return err
}

// field returns the settable value of a dotted key such as "train.lr".
func (c *Config) field(key string) (reflect.Value, error) {
	v := reflect.ValueOf(c).Elem()
	parts := strings.Split(key, ".")
	for i, part := range parts {
		f, ok := yamlFields(v.Type())[part]
		if !ok {
			known := make([]string, 0)
			for name := range yamlFields(v.Type()) {
				known = append(known, strings.Join(append(append([]string{}, parts[:i]...), name), "."))
			}
			sort.Strings(known)
			return reflect.Value{}, fmt.Errorf("unknown key %s (known: %s)", key, strings.Join(known, ", "))
		}
		v = v.FieldByIndex(f.Index)
		if v.Kind() == reflect.Struct && i == len(parts)-1 {
			return reflect.Value{}, fmt.Errorf("%s is a section; set one of its keys, e.g. %s.%s", key, key, firstKey(v.Type()))
		}
		if v.Kind() != reflect.Struct && i < len(parts)-1 {
			return reflect.Value{}, fmt.Errorf("unknown key %s (%s is a single value)", key, strings.Join(parts[:i+1], "."))
		}
	}
	return v, nil
}

func firstKey(t reflect.Type) string {
	return strings.Split(t.Field(0).Tag.Get("yaml"), ",")[0]
}

// Set applies one override such as Set("model.dim", "128"), parsing the value
// as YAML into the key's type. Paths are taken as given (relative to the
// working directory). Setting train.preset replaces every train setting with
// the preset's, so give it before other train overrides. Call Validate after
// the last Set.
func (c *Config) Set(key, value string) error {
	if key == "train.preset" {
		return c.applyPreset(value)
	}
	v, err := c.field(key)
	if err != nil {
		return err
	}
	if v.Kind() == reflect.String {
		v.SetString(value) // a string is taken verbatim, even "123" or "yes"
		return nil
	}
	ptr := reflect.New(v.Type())
	if err := yaml.Unmarshal([]byte(value), ptr.Interface()); err != nil || strings.TrimSpace(value) == "" {
		return fmt.Errorf("%s: %q is not a valid %s", key, value, kindName(v.Kind()))
	}
	v.Set(ptr.Elem())
	return nil
}

// SetPathNotes says, for each override of a path key (PathKeys) whose value
// is relative, the path it names and the rule: a --set path is relative to
// the working directory, while the config's own paths are relative to the
// config file's folder. Nothing is said when the config is in the working
// directory, where both rules agree.
func SetPathNotes(configPath string, overrides []string) []string {
	dir := filepath.Dir(configPath)
	if dir == "." {
		return nil
	}
	var notes []string
	for _, o := range overrides {
		k, v, _ := strings.Cut(o, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if v == "" || filepath.IsAbs(v) || !slices.Contains(PathKeys, k) {
			continue
		}
		abs, _ := filepath.Abs(v)
		notes = append(notes, fmt.Sprintf("--set %s=%s is %s: a --set path is relative to the working directory (the config's own paths are relative to %s)", k, v, abs, dir))
	}
	return notes
}

// SetAll applies "key=value" overrides in order.
func (c *Config) SetAll(overrides []string) error {
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return model.FieldErrorf("Set", "{Set} %q: want key=value, e.g. model.dim=128", o)
		}
		if err := c.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("%w %w", model.FieldErrorf("Set", "{Set}"), err)
		}
	}
	return nil
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	}
	return k.String()
}

// Validate checks every value and names the first bad key, e.g.
// "config.yaml: train.lr: must be > 0, got -1".
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", c.Source, key, fmt.Sprintf(format, args...))
	}
	d := c.Data
	given := d.Train != "" || d.Val != "" || d.Test != ""
	switch {
	case d.Responses == "" && !given:
		return bad("data", "set data.responses (one file to split) or data.train, data.val and data.test")
	case d.Responses != "" && given:
		return bad("data", "set either data.responses or data.train/val/test, not both")
	case given && (d.Train == "" || d.Val == "" || d.Test == ""):
		return bad("data", "data.train, data.val and data.test must all be set (got train %q, val %q, test %q)", d.Train, d.Val, d.Test)
	}
	if !oneOf(d.Format, read.Formats...) {
		return bad("data.format", "must be one of %s, got %q", strings.Join(read.Formats, ", "), d.Format)
	}
	s := c.Split
	if !(s.Val >= 0 && s.Val < 1) {
		return bad("split.val", "must be in [0, 1), got %v", s.Val)
	}
	if !(s.Test >= 0 && s.Test < 1) {
		return bad("split.test", "must be in [0, 1), got %v", s.Test)
	}
	if s.Val+s.Test >= 1 {
		return bad("split", "val + test must be below 1, got %v", s.Val+s.Test)
	}
	if d.Responses != "" && s.Val <= 0 {
		return bad("split.val", "must be > 0 (early stopping needs validation cells), got %v", s.Val)
	}
	if !oneOf(s.By, "cell", "model", "item", "benchmark") {
		return bad("split.by", "must be cell, model, item or benchmark, got %q", s.By)
	}
	if s.Hold != "" && s.By != "benchmark" {
		return bad("split.hold", "needs split.by: benchmark (got by: %s)", s.By)
	}
	if !(s.OnboardFraction > 0 && s.OnboardFraction < 1) {
		return bad("split.onboard_fraction", "must be in (0, 1), got %v", s.OnboardFraction)
	}
	if strings.TrimSpace(c.Encoder.Spec) == "" {
		return bad("encoder.spec", "must be set (hash, hash:DIM, tfidf, tfidf:DIM, hf:ORG/NAME, a model folder or precomputed:FILE)")
	}
	m := c.Model
	if m.Dim < 1 || m.Dim > limits.MaxDim {
		return bad("model.dim", "must be in [1, %d], got %d", limits.MaxDim, m.Dim)
	}
	if m.Hidden < 0 || m.Hidden > limits.MaxDim {
		return bad("model.hidden", "must be in [0, %d] (0 means twice the encoder dimension), got %d", limits.MaxDim, m.Hidden)
	}
	if !(m.Dropout >= 0 && m.Dropout < 1) {
		return bad("model.dropout", "must be in [0, 1), got %v", m.Dropout)
	}
	if !(m.Residual >= 0) || math.IsInf(m.Residual, 1) {
		return bad("model.residual", "must be >= 0 (0 turns it off), got %v", m.Residual)
	}
	t := c.Train
	if !oneOf(t.Preset, "", "reference") {
		return bad("train.preset", "must be reference (or empty for the defaults), got %q", t.Preset)
	}
	if t.Epochs < 1 {
		return bad("train.epochs", "must be >= 1, got %d", t.Epochs)
	}
	if t.BatchSize < 1 {
		return bad("train.batch_size", "must be >= 1, got %d", t.BatchSize)
	}
	if !(t.LR > 0) || math.IsInf(t.LR, 1) {
		return bad("train.lr", "must be finite and > 0, got %v", t.LR)
	}
	if !(t.WeightDecay >= 0) || math.IsInf(t.WeightDecay, 1) {
		return bad("train.weight_decay", "must be finite and >= 0, got %v", t.WeightDecay)
	}
	if !(t.Gamma > 0 && t.Gamma <= 1) {
		return bad("train.gamma", "must be in (0, 1], got %v", t.Gamma)
	}
	if t.Patience < 0 {
		return bad("train.patience", "must be >= 0 (0 never stops early), got %d", t.Patience)
	}
	if t.Device == "gorgonia" {
		return bad("train.device", "gorgonia was retired: use cpu (its default JE-IRT step is the Gorgonia graph; cpu:fused is the hand-written one)")
	}
	if !oneOf(t.Device, backend.Auto, backend.CPU, backend.CPUFused, backend.CUDA) {
		return bad("train.device", "must be auto, cpu, cpu:fused or cuda, got %q", t.Device)
	}
	if t.Step != "" {
		return bad("train.step", "was retired: the CPU step is part of train.device (cpu: the Gorgonia graph step, the default; cpu:fused: the hand-written one)")
	}
	if !oneOf(t.Batching, "by-question", "per-pair") {
		return bad("train.batching", "must be by-question or per-pair, got %q", t.Batching)
	}
	r := c.Route
	if r.Folds < 0 || r.Folds == 1 {
		return bad("route.folds", "must be 0 (no cross-validation) or at least 2, got %d", r.Folds)
	}
	if r.Repeats < 1 {
		return bad("route.repeats", "must be >= 1, got %d", r.Repeats)
	}
	if !oneOf(r.Guard, route.GuardOneSE, route.GuardSE, route.GuardRealityCheck) {
		return bad("route.guard", "must be %s, %s or %s, got %q", route.GuardOneSE, route.GuardSE, route.GuardRealityCheck, r.Guard)
	}
	if !oneOf(r.Refit, RefitBestEpoch, RefitEarlyStop) {
		return bad("route.refit", "must be %s or %s, got %q", RefitBestEpoch, RefitEarlyStop, r.Refit)
	}
	if !(r.FalseFlagRate > 0 && r.FalseFlagRate < 1) {
		return bad("route.false_flag_rate", "must be in (0, 1), got %v", r.FalseFlagRate)
	}
	if strings.TrimSpace(c.Output) == "" {
		return bad("output", "must be set (the checkpoint folder to write)")
	}
	return nil
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
