// Package irtrun runs the file-level jobs of jeirt irt: read response
// files, fit them into fit folders (one, a batch, or jointly), select items
// from a fit folder, estimate new models' scores from a few answers (irt
// estimate) and cross-validate a file, with the lines the commands print.
package irtrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/interrupt"
	"github.com/jeirt/jeirt/model/irtfit"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/backend"
	"github.com/jeirt/jeirt/train/eval"
	"github.com/jeirt/jeirt/train/irt"
	"github.com/jeirt/jeirt/train/irtstat"
)

// ReadLogged reads a response file as the irt commands do and says on log
// what it read (with verbose, also how long it took and what the response
// cache did).
func ReadLogged(path string, opt read.Options, log progress.Logf, verbose bool) (*model.Responses, error) {
	began, cpu := time.Now(), machine.CPUSeconds()
	r, rep, err := read.File(path, opt)
	if err != nil {
		return nil, err
	}
	log.Printf("read %s: %d models x %d items, %d observed cells (%s)",
		path, r.NumModels(), r.NumItems(), r.Len(), rep.Format)
	if verbose {
		cache := rep.Cache
		if cache == "" {
			cache = "-"
		}
		log.Printf("read in %.2fs (%.2fs CPU); cache: %s %s", time.Since(began).Seconds(), machine.CPUSeconds()-cpu, cache, rep.CachePath)
	}
	if r.Len() >= 1<<24 {
		// Hand the reader's garbage (grown buffers, name tables) back before the
		// fit allocates its layout, so the two do not add up in the peak.
		debug.FreeOSMemory()
	}
	return r, nil
}

// FitFiles fits response files into fit folders, as jeirt irt fit does: one
// file into Out, or several (or any Names) in one batched run, each into
// Out/NAME. Its zero value needs Data and Out.
type FitFiles struct {
	Settings irtfit.Settings // Format, Items and Duplicates come from Read
	Read     read.Options
	Data     []string // response files
	Names    []string // sub-folders of a batch, one per file (default irtfit.OutNames)
	Out      string   // output folder, written atomically
	Trace    string   // CSV of seconds,loss per iteration ("": none)
	Force    bool     // replace Out
	Verbose  bool     // read timings on Log
	Version  string   // written into fit.json
	Log      progress.Logf
	// Device is the device the fits run on as the command resolved it from
	// Settings.Device (backend.Resolve); "" resolves it here.
	Device string
}

// runDevice is the device a fit with settings set runs on: device (the
// command's resolution of set.Device), or set.Device resolved now. A signed
// fit whose request was auto runs on the CPU when the device has no signed
// fits (backend.CBMMSigned), and one under a prior on the CPU when the
// device fits none (backend.CBMMFamily); one that named such a device fails
// in the fit.
func runDevice(set irtfit.Settings, device string) (string, error) {
	if device == "" {
		var err error
		if device, err = backend.Resolve(set.Device); err != nil {
			return "", err
		}
	}
	auto := set.Device == "" || set.Device == backend.Auto
	if auto && set.Signed && !backend.Implements[backend.CBMMSigned](device) {
		device = backend.CPU
	}
	if prior, err := set.PriorSpec(); err == nil && prior.On() && auto && !backend.Implements[backend.CBMMFamily](device) {
		device = backend.CPU
	}
	return device, nil
}

// FileFit is one fitted file of FitFiles.
type FileFit struct {
	Dir      string // its folder
	Models   int
	Items    int
	Analysis *irtstat.Analysis
	// Joint is the number of files of a --joint fit (0 otherwise); Groups
	// says to list the item groups' mean loadings (signed and joint fits).
	Joint  int
	Groups bool
}

// Summary is what jeirt irt fit prints for the fit: one line, then the
// item groups' mean loadings per dimension when Groups is set.
func (f FileFit) Summary() string {
	an := f.Analysis
	var b strings.Builder
	tau := fmt.Sprintf("%.4f", model.Float(an.KendallTau))
	if an.KendallNote != "" {
		tau += " (" + an.KendallNote + ")"
	}
	if f.Joint > 0 {
		fmt.Fprintf(&b, "wrote %s: %d benchmarks jointly, %d models, %d items; Kendall τ(θ, accuracy) = %s",
			f.Dir, f.Joint, f.Models, f.Items, tau)
	} else {
		fmt.Fprintf(&b, "wrote %s: %d models, %d items; Kendall τ(θ, accuracy) = %s; %d model(s) move more than %d ranks; %s",
			f.Dir, f.Models, f.Items, tau, len(an.RankMoves), an.RankMoveLimit, FlagSummary(an.FlagCounts))
	}
	b.WriteString("; " + ReliabilitySummary(an.Test))
	if line := statsSummary(an.FitStatistics, an.PersonMisfits); line != "" {
		b.WriteString("\n" + line)
	}
	list := func(what string, names []string) {
		if n := len(names); n > 0 {
			fmt.Fprintf(&b, "; %d model(s) %s, not ranked: %s", n, what, strings.Join(names[:min(n, 5)], ", "))
			if n > 5 {
				b.WriteString(", ...")
			}
		}
	}
	list("with no observed cell", an.Unobserved)
	list(fmt.Sprintf("with fewer than %d answers (few_answers)", an.MinAnswers), an.FewAnswers)
	if f.Groups && len(an.GroupLoadings) > 0 {
		fmt.Fprintf(&b, "\n%-24s %6s  mean loading per dimension", "group", "items")
		for _, g := range an.GroupLoadings {
			fmt.Fprintf(&b, "\n%-24s %6d ", g.Group, g.Items)
			for _, x := range g.MeanLoading {
				fmt.Fprintf(&b, " %7.3f", x)
			}
		}
	}
	return b.String()
}

// ReliabilitySummary is "Cronbach's α 0.9850, marginal reliability 0.9878"
// (the reliability at rank 1 only, where it is always defined; α n/a with
// the reason when undefined).
func ReliabilitySummary(td irtstat.TestDiagnostics) string {
	s := fmt.Sprintf("Cronbach's α %.4f", td.Alpha)
	if math.IsNaN(td.Alpha) {
		s = "Cronbach's α n/a (it needs two or more items, and two or more models whose totals differ)"
	}
	if !math.IsNaN(td.MarginalReliability) {
		s += fmt.Sprintf(", marginal reliability %.4f", td.MarginalReliability)
	}
	return s
}

// FlagSummary lists item flag counts in name order: "flags never_solved 32,
// uninformative 3", or "no item flagged".
func FlagSummary(counts map[string]int) string {
	var parts []string
	for f, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", f, n))
	}
	if len(parts) == 0 {
		return "no item flagged"
	}
	sort.Strings(parts)
	return "flags " + strings.Join(parts, ", ")
}

// priorLine says what the prior p makes of the fit.
func priorLine(p model.Prior) string {
	if !p.On() {
		return "none (joint maximum likelihood: items answered only right or only wrong, and models, have no finite estimate)"
	}
	return p.String() + " (maximum a posteriori; --prior none for joint maximum likelihood)"
}

// Run reads, fits, analyses and writes every file.
func (ff FitFiles) Run(ctx context.Context) ([]FileFit, error) {
	set := ff.Settings
	set.Format, set.Items, set.Duplicates, set.Graded = ff.Read.Format, ff.Read.Items, ff.Read.Duplicates, ff.Read.Graded
	if set.Level == 0 {
		set.Level = 0.95
	}
	if err := CheckSettings(set); err != nil {
		return nil, err
	}
	prior, _ := set.PriorSpec()
	set.Prior = prior.String() // fit.json records the prior in full
	log0 := ff.Log
	log0.Printf("prior: %s", priorLine(prior))
	device, err := runDevice(set, ff.Device)
	if err != nil {
		return nil, err
	}
	log := ff.Log
	batch := len(ff.Data) > 1 || len(ff.Names) > 0
	if len(ff.Names) > 0 && len(ff.Names) != len(ff.Data) {
		return nil, model.FieldErrorf("Names", "{Names} given %d time(s) for %d {Data} file(s): give one per file, in the same order, or none", len(ff.Names), len(ff.Data))
	}
	if batch && ff.Read.Items != "" {
		return nil, model.FieldErrorf("Items", "{Items} names the item texts of one benchmark; it cannot go with several {Data} files")
	}
	dirs, err := irtfit.OutNames(ff.Data, ff.Names)
	if err != nil {
		return nil, err
	}
	// The output rule's own check: an empty folder counts as absent.
	if _, err := fileio.CheckOutput(fileio.Output{Path: ff.Out, Folder: true, Force: ff.Force}); err != nil {
		return nil, err
	}
	if set.Joint {
		return ff.runJoint(ctx, set, device, dirs)
	}
	rs := make([]*model.Responses, len(ff.Data))
	cells := 0
	for k, path := range ff.Data {
		if rs[k], err = ReadLogged(path, ff.Read, log, ff.Verbose); err != nil {
			return nil, err
		}
		cells += rs[k].Len()
	}
	var trace []string
	job := FitJob{Settings: set, Data: ff.Data, Version: ff.Version, Log: log, Device: device,
		Trace: func(k int, secs, loss float64) {
			line := fmt.Sprintf("%.6f,%.10g", secs, loss)
			if batch {
				line = dirs[k] + "," + line
			}
			trace = append(trace, line)
		}}
	folders, secs, err := job.Run(ctx, rs)
	if err != nil {
		return nil, err
	}
	if cells >= 1<<24 {
		// The fit's layout and surrogate are garbage now: free them before the
		// analyses build their own indexes, so the two do not add up in the peak.
		debug.FreeOSMemory()
	}
	if ff.Trace != "" {
		hdr := "seconds,loss\n"
		if batch {
			hdr = "fit,seconds,loss\n"
		}
		if err := fileio.WriteFileAtomic(ff.Trace, func(w io.Writer) error {
			_, err := io.WriteString(w, hdr+strings.Join(trace, "\n")+"\n")
			return err
		}); err != nil {
			return nil, err
		}
	}
	if batch {
		log.Printf("fit: %d files in one %s run, %.2fs", len(rs), set.Method, secs)
	}
	res := make([]FileFit, len(rs))
	for k, r := range rs {
		if err := job.Analyze(ctx, k, r, folders[k], secs); err != nil {
			return nil, err
		}
		res[k] = FileFit{Dir: ff.Out, Models: r.NumModels(), Items: r.NumItems(), Analysis: folders[k].Analysis, Groups: set.Signed}
		if batch {
			res[k].Dir, folders[k].Folder.Doc.BatchFits = filepath.Join(ff.Out, dirs[k]), len(rs)
		}
	}
	err = fileio.WriteDirAtomic(ff.Out, ff.Force, func(tmp string) error {
		if !batch {
			return irtfit.Write(tmp, folders[0].Folder)
		}
		for k := range rs {
			sub := filepath.Join(tmp, dirs[k])
			if err := os.Mkdir(sub, 0o755); err != nil {
				return err
			}
			if err := irtfit.Write(sub, folders[k].Folder); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	return res, keptAfterInterrupt(ff.Out, folders)
}

// keptAfterInterrupt is the error of a run whose bootstrap was interrupted
// after out was written (nil when none was): what the folder holds, for the
// terminal.
func keptAfterInterrupt(out string, folders []*Fitted) error {
	var parts []string
	var cause error
	for _, f := range folders {
		if in := f.Interrupted; in != nil {
			cause = in.Err
			parts = append(parts, fmt.Sprintf("%d of %d bootstrap replicates", in.Done, in.Of))
		}
	}
	if cause == nil {
		return nil
	}
	what := "the fit and " + parts[0]
	if len(folders) > 1 {
		what = fmt.Sprintf("%d fits, %d with their bootstrap interrupted (%s)", len(folders), len(parts), strings.Join(parts, ", "))
	}
	return &interrupt.Error{Kept: fmt.Sprintf("wrote %s with %s; fit.json says interrupted: true and bootstrap_completed", out, what), Err: cause}
}

// runJoint is irt fit --joint: every file in one matrix (FitJoint), one fit
// folder in Out; names (irtfit.OutNames) name the item groups.
func (ff FitFiles) runJoint(ctx context.Context, set irtfit.Settings, device string, names []string) ([]FileFit, error) {
	if ff.Read.Items != "" {
		return nil, model.FieldErrorf("Items", "{Items} names the item texts of one benchmark; it cannot go with {Joint}")
	}
	rs := make([]*model.Responses, len(ff.Data))
	for k, path := range ff.Data {
		var err error
		if rs[k], err = ReadLogged(path, ff.Read, ff.Log, ff.Verbose); err != nil {
			return nil, err
		}
	}
	job := FitJob{Settings: set, Data: ff.Data, Version: ff.Version, Log: ff.Log, Device: device}
	fit, r, err := FitJoint(ctx, job, names, rs)
	if err != nil {
		return nil, err
	}
	if err := fileio.WriteDirAtomic(ff.Out, ff.Force, func(tmp string) error { return irtfit.Write(tmp, fit.Folder) }); err != nil {
		return nil, err
	}
	return []FileFit{{Dir: ff.Out, Models: r.NumModels(), Items: r.NumItems(), Analysis: fit.Analysis, Joint: len(rs), Groups: true}},
		keptAfterInterrupt(ff.Out, []*Fitted{fit})
}

// SelectFile keeps the fraction keep of the items of the fit folder dir by
// Fisher information (InformationSelect), writes them to out, and returns
// the line jeirt irt select prints: with the Kendall τ between the model
// rankings from the kept items and from all items when the fit's responses
// can be read again, on device (resolved by the command; "": the fit's
// settings.device, resolved here).
//
// rule is "info" (or "": InformationSelect) or "benchmirt"
// (BenchMIRTSelect with bins difficulty bins). excludeFlagged leaves out
// every item that carries a flag in items.csv; round(keep·J) items are
// still kept (J all items), as long as that many are not flagged.
func SelectFile(ctx context.Context, dir string, keep float64, out, device, rule string, bins int, excludeFlagged bool, log progress.Logf) (string, error) {
	folder, err := irtfit.Read(dir)
	if err != nil {
		return "", err
	}
	fit := folder.IRT()
	if err := checkKeep(keep); err != nil {
		return "", err
	}
	if rule == "benchmirt" && bins < 0 {
		return "", model.FieldErrorf("Bins", "{Bins} %d: must be at least 1 (0: 10)", bins)
	}
	// cand: the items selection may choose from (all, or the unflagged).
	pool, cand, flagged := fit, []int(nil), 0
	perAnswer := folder.TrialsPerAnswer()
	if excludeFlagged {
		for j, it := range folder.Items {
			if it.Flag == "" {
				cand = append(cand, j)
			}
		}
		flagged = len(fit.Items) - len(cand)
		if len(cand) == 0 {
			return "", model.FieldErrorf("ExcludeFlagged", "%s: every item is flagged; nothing is left to select (drop {ExcludeFlagged})", dir)
		}
		pool = subFit(fit, cand)
		sub := make([]float64, len(cand))
		for k, j := range cand {
			sub[k] = perAnswer[j]
		}
		perAnswer = sub
		n := max(1, int(math.Round(keep*float64(len(fit.Items)))))
		keep = min(1, float64(n)/float64(len(cand)))
	}
	var items []int
	var at []float64
	switch rule {
	case "", "info":
		items, at, err = irtstat.InformationSelectTrials(pool, keep, perAnswer)
	case "benchmirt":
		items, at, err = irtstat.BenchMIRTSelect(pool, keep, bins)
	default:
		return "", model.FieldErrorf("Rule", "{Rule} %q: want info or benchmirt", rule)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", model.FieldErrorf("Keep", "{Keep}"), err)
	}
	if cand != nil {
		for k, j := range items {
			items[k] = cand[j]
		}
	}
	err = fileio.WriteFileAtomic(out, func(w io.Writer) error { return irtfit.WriteSelection(w, fit, items, at) })
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("kept %d of %d items in %s", len(items), len(fit.Items), out)
	if excludeFlagged {
		msg += fmt.Sprintf(" (%d flagged items left out)", flagged)
	}
	// τ between the rankings needs the responses: read them again as the fit did.
	set := folder.Doc.Settings
	if device, err = runDevice(set, device); err != nil {
		return "", err
	}
	r, rerr := irtfit.ReadFolderData(dir, folder)
	if rerr != nil {
		// The selection stands; what it cannot be checked against is said.
		return msg + "; no Kendall τ between the rankings: " + rerr.Error(), nil
	}
	set = folder.Doc.Settings // the files where they are now
	log.Printf("read %s: %d models x %d items, %d observed cells", set.Data, r.NumModels(), r.NumItems(), r.Len())
	if r.NumModels() != len(fit.Models) || r.NumItems() != len(fit.Items) {
		return "", fmt.Errorf("%s now has %d models x %d items, the fit in %s has %d x %d", set.Data,
			r.NumModels(), r.NumItems(), dir, len(fit.Models), len(fit.Items))
	}
	c, err := FitterFor(set, r)
	if err != nil {
		return "", err
	}
	c.Log, c.Device = log, device
	tau, _, err := irtstat.SelectionTau(ctx, c, r, fit, items)
	if err != nil {
		return "", err
	}
	msg += fmt.Sprintf("; Kendall τ between the model rankings from the kept items and from all items: %.4f", model.Float(tau))
	if math.IsNaN(tau) {
		msg += " (fewer than two models, or one of the rankings puts every model level)"
	}
	return msg, nil
}

// subFit is fit restricted to the items idx (the models kept whole).
func subFit(fit *model.IRT, idx []int) *model.IRT {
	rk := fit.Rank
	sub := &model.IRT{Models: fit.Models, Theta: fit.Theta, Rank: rk, Sigma: fit.Sigma, Signed: fit.Signed, Family: fit.Family}
	for _, j := range idx {
		sub.Items = append(sub.Items, fit.Items[j])
		sub.A = append(sub.A, fit.A[j*rk:(j+1)*rk]...)
		sub.B = append(sub.B, fit.B[j])
		if fit.C != nil {
			sub.C = append(sub.C, fit.C[j])
		}
	}
	return sub
}

// CVFile cross-validates the cBMM fit of the response file set.Data
// (CrossValidateFits), as jeirt irt cv does: one fit per model of models
// (model.Families' names; empty: set's) and rank of ranks (empty: set.Rank),
// all on the same folds. It returns the result and the number of observed
// cells.
func CVFile(ctx context.Context, set irtfit.Settings, read read.Options, folds int, models []string, ranks []int, device string, log progress.Logf, verbose bool) (*irtstat.CVResult, int, error) {
	set.Level, set.Accelerate, set.Method = 0.95, true, string(irt.MethodCBMM)
	set.Format, set.Items, set.Duplicates, set.Graded = read.Format, read.Items, read.Duplicates, read.Graded
	if len(models) == 0 {
		models = []string{set.Family().String()}
	}
	if len(ranks) == 0 {
		ranks = []int{set.Rank}
	}
	var sets []irtfit.Settings
	for _, m := range models {
		for _, rk := range ranks {
			s := set
			s.Model, s.Rank = m, rk
			if model.Family(m).CommonSlope() && rk > 1 {
				s.Rank = 1 // checked as rank 1; its row says it is not fitted
			}
			if !model.Family(m).HasAsymptote() {
				s.Guess = ""
			}
			if err := CheckSettings(s); err != nil {
				return nil, 0, err
			}
			prior, _ := s.PriorSpec()
			s.Prior = prior.String()
			s.Rank = rk
			sets = append(sets, s)
		}
	}
	if folds < 2 {
		return nil, 0, model.FieldErrorf("Folds", "{Folds} %d: need at least 2", folds)
	}
	device, err := runDevice(set, device)
	if err != nil {
		return nil, 0, err
	}
	r, err := ReadLogged(set.Data, read, log, verbose)
	if err != nil {
		return nil, 0, err
	}
	cs := make([]irt.CBMM, len(sets))
	for k, s := range sets {
		if cs[k], err = FitterFor(s, r); err != nil {
			return nil, 0, err
		}
		cs[k].Log, cs[k].Device = log, device
	}
	start := time.Now()
	res, err := irtstat.CrossValidateFits(ctx, cs, r, folds, set.Seed)
	if err != nil {
		return nil, 0, err
	}
	log.Printf("cv: %d folds, %d fit(s) each, in %.2fs", folds, len(cs), time.Since(start).Seconds())
	return res, r.Len(), nil
}

// WriteCVTable prints the cross-validation table of jeirt irt cv: one row per
// fit and per baseline, with the fit of the lowest held-out log loss marked
// "*" when there are several; asJSON prints the result as indented JSON
// instead.
func WriteCVTable(w io.Writer, res *irtstat.CVResult, cells int, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(w, "%d-fold CV over %d cells (seed %d)\n", res.Folds, cells, res.Seed)
	fmt.Fprintf(w, "%-24s %9s %9s %9s %9s %9s %9s %9s\n", "method", "log_loss", "accuracy", "auc", "brier", "ece", "spearman", "kendall")
	type row struct {
		n, k, note string
		m          eval.Metrics
	}
	var rows []row
	for k, f := range res.Fits {
		name := strings.ToUpper(f.Name[:3]) + f.Name[3:] + " (cBMM)"
		if len(res.Fits) > 1 && k == res.Best {
			name = "* " + name
		}
		rows = append(rows, row{name, f.Name, f.Note, f.Metrics})
	}
	rows = append(rows, row{"per-model accuracy", "baseline", "", res.Baseline})
	if res.BenchmarkBaseline != nil {
		rows = append(rows, row{"per-benchmark average", "benchmark_baseline", "", *res.BenchmarkBaseline})
	}
	var notes []string
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(w, "%-24s not fitted: %s\n", r.n, r.note)
			continue
		}
		rk := res.Ranking[r.k]
		f := func(x float64) model.Float { return model.Float(x) }
		fmt.Fprintf(w, "%-24s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f\n", r.n, f(r.m.LogLoss), f(r.m.Accuracy), f(r.m.AUC), f(r.m.Brier), f(r.m.ECE), rk.Spearman, rk.Kendall)
		for _, why := range []string{r.m.Scores().Undefined(), rk.Note} {
			if why != "" && !slices.Contains(notes, why) {
				notes = append(notes, why)
			}
		}
	}
	if len(res.Fits) > 1 && res.Best >= 0 {
		fmt.Fprintf(w, "* lowest held-out log loss: %s\n", res.Fits[res.Best].Name)
	}
	for _, why := range notes {
		fmt.Fprintf(w, "n/a: %s\n", why)
	}
	writeNested(w, res)
	return nil
}
