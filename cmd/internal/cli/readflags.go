package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/spf13/cobra"
)

// ReadFlags registers --format, --items, --duplicates, --graded, the
// cache flags, --metric, --filter and --model-names of evaluation-tool
// logs, and --benchmark, --condition and --score-map of measurement-db
// trees, the options of read.File, on a command that reads responses.
func ReadFlags(cmd *cobra.Command, opt *read.Options) {
	cmd.Flags().StringVar(&opt.Format, "format", "auto", "input format: auto|long|wide|wide-items|pyirt|patterns, a measurement-db tree measurement-db, or evaluation-tool logs lm-eval|helm|inspect|eee (auto recognises both; a folder is searched for them)")
	cmd.Flags().StringVar(&opt.Items, "items", "", "item-text file joined by item id: CSV, TSV or JSONL with an id (item_id, task_id, instance_id, ...) and a text (text, problem_statement, prompt, question, instruct_prompt, ...)")
	cmd.Flags().StringVar(&opt.Duplicates, "duplicates", "majority", DuplicatesHelp)
	cmd.Flags().BoolVar(&opt.Graded, "graded", false, GradedHelp)
	cmd.Flags().StringVar(&opt.Columns, "columns", "", "the columns of a long file whose header jeirt does not know, e.g. model=Model Name,item=Question,label=Score (roles: model, item, label, successes, trials, text, group)")
	cmd.Flags().StringVar(&opt.Delimiter, "delimiter", "", "field separator of a text file: , ; | or tab (default: a comma, a tab for .tsv or a header with tabs, a semicolon for a header with only semicolons)")
	cmd.Flags().BoolVar(&opt.NoCache, "no-cache", false, "read a large text file directly: neither load nor write its binary response cache")
	cmd.Flags().Int64Var(&opt.CacheMin, "cache-min", 64<<20, "cache text response files of at least this many bytes (in the user cache folder, jeirt/responses; keyed by a hash of the whole file)")
	cmd.Flags().BoolVar(&opt.CacheTrustMtime, "cache-trust-mtime", false, "load a file's response cache when its size and modification time match, without hashing the file (faster; wrong for a file changed in place with its time restored)")
	cmd.Flags().StringSliceVar(&opt.Metric, "metric", nil, "evaluation logs: the metric to score by (lm-eval metric, HELM stat, inspect scorer, Every Eval Ever is_correct|score); a list: each task takes the first it has; default each task's first (HELM: the run's main metric)")
	cmd.Flags().StringVar(&opt.Filter, "filter", "", "lm-eval logs: the filter whose samples are read (default each task's first)")
	cmd.Flags().StringVar(&opt.ModelNames, "model-names", "", "evaluation logs: CSV from,to mapping model names as the logs give them to the names to use (unmapped names are kept as given)")
	cmd.Flags().StringSliceVar(&opt.Benchmark, "benchmark", nil, "measurement-db: the benchmarks to read (benchmark_id, name or data set folder; all: every one as one matrix, items grouped by benchmark); needed when the tree has several")
	cmd.Flags().StringVar(&opt.Condition, "condition", "", "measurement-db: the test_condition to read ((none) for rows without one); needed when the benchmarks read have several")
	cmd.Flags().StringVar(&opt.ScoreMap, "score-map", "", "measurement-db: the stated mapping of a continuous_unbounded response to a score: LO:HI (linear onto [0, 1]) or a threshold >=T, >T, <=T, <T (1 when it holds)")
	opt.Warn = progress.LogTo(Stderr(cmd))
	opt.Progress = opt.Warn
}

// The help of --duplicates and --graded, wherever responses are read.
const (
	DuplicatesHelp = "repeated (model, item) rows: majority (ties become missing)|first|error|trials (the rows are trials of one cell: k of n correct)"
	GradedHelp     = "read labels strictly between 0 and 1 as graded scores (partial credit); without it such a label is an error"
)

// FormatValue is a --format flag naming the layout of responses (route's
// --format, the layout of --data). Its old use for
// the printed format (table, csv, json) is refused with the replacement.
type FormatValue struct{ In *string }

func (f *FormatValue) String() string {
	if *f.In == "" {
		return "auto"
	}
	return *f.In
}
func (f *FormatValue) Type() string { return "string" }
func (f *FormatValue) Set(v string) error {
	if v == "table" || v == "csv" || v == "json" {
		return fmt.Errorf("--format %s for the printed format was retired: use --print %s (--format is the layout of --data)", v, v)
	}
	if !slices.Contains(read.Formats, v) {
		return fmt.Errorf("%q is not an input format (%s); the printed format is --print table|csv|json", v, strings.Join(read.Formats, "|"))
	}
	*f.In = v
	return nil
}

// ModelList is --models as a list: nil when not given, empty (an error) when
// it names no model.
func ModelList(s string) []string {
	if s == "" {
		return nil
	}
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
