// Package irtfit owns the folder `jeirt irt fit` writes, with its reader and
// writer side by side:
//
//	abilities.csv  one row per model: θ (and bootstrap SE and interval), rank, accuracy,
//	               observed answers (n_obs), flag and person fit (lz_star, infit, outfit)
//	items.csv      one row per item in mirt's parameterisation: slope a, intercept d,
//	               difficulty b = −d/a (MDIFF = −d/‖a‖ at rank > 1), SEs, flags
//	fit.json       the settings, the loss history and the analyses (Doc)
//	information.csv  the test information along θ and the SE of θ (rank 1)
//
// Missing values (no bootstrap) are empty CSV cells and NaN in memory.
package irtfit

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/csvtable"
	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
)

// Settings is the "settings" object of fit.json: how the fit was made, so that
// `jeirt irt select` can read the responses again and refit.
type Settings struct {
	Method     string `json:"method"`
	Data       string `json:"data"`
	Format     string `json:"format"`
	Items      string `json:"items,omitempty"`
	Duplicates string `json:"duplicates"`
	Graded     bool   `json:"graded,omitempty"` // fractional labels read as graded scores
	Rank       int    `json:"rank"`
	Signed     bool   `json:"signed,omitempty"`
	// Model is the response function, a model.Family: 1pl, 2pl or 3pl
	// ("" in older folders: the 2pl; Family parses it). Guess is the 3PL's lower asymptotes: "" fitted,
	// a number (every item's c), or a column of the Items file (option
	// counts, c = 1/n, or c itself); GuessPrior the Beta(α, β) prior on
	// fitted c.
	Model      string    `json:"model,omitempty"`
	Guess      string    `json:"guess,omitempty"`
	GuessPrior []float64 `json:"guess_prior,omitempty"`
	// Joint: the --data files (JointData, named JointNames) were fitted as
	// one matrix (model.JoinBenchmarks); Data lists them joined by ",".
	Joint     bool     `json:"joint,omitempty"`
	JointData []string `json:"joint_data,omitempty"`
	// DataSHA256 (JointSHA256 for a joint fit, one per file) is the
	// SHA-256 of the data file's bytes when the fit was made, and
	// DataFromFit (JointFromFit, ItemsFromFit) its path from the fit
	// folder, for a project moved or copied with its fit; absent in older
	// fits, and the hash for a pipe (see RecordSources, Resolve).
	DataSHA256      string   `json:"data_sha256,omitempty"`
	JointSHA256     []string `json:"joint_data_sha256,omitempty"`
	DataFromFit     string   `json:"data_from_fit,omitempty"`
	JointFromFit    []string `json:"joint_data_from_fit,omitempty"`
	ItemsFromFit    string   `json:"items_from_fit,omitempty"`
	JointNames      []string `json:"joint_names,omitempty"`
	Sigma           float64  `json:"sigma"`
	Tol             float64  `json:"tol"`
	MaxIter         int      `json:"max_iter"`
	Accelerate      bool     `json:"accelerate"`
	Device          string   `json:"device"`                    // the device asked for (auto, cpu, cuda), as given
	DeviceResolved  string   `json:"device_resolved,omitempty"` // the device it ran on (absent in older fits)
	Threads         int      `json:"threads"`
	Bootstrap       int      `json:"bootstrap"`
	BootstrapModels bool     `json:"bootstrap_models"`
	// MaxMemory caps the bootstrap's working memory in bytes (replicates
	// are fitted in batches that fit); 0 means half of the machine's memory.
	MaxMemory int64   `json:"max_memory,omitempty"`
	Level     float64 `json:"level"`
	Seed      int64   `json:"seed"`
	MinA      float64 `json:"min_discrimination"`
	RankMove  int     `json:"rank_move_threshold"`
	// MinAnswers is the fewest observed answers a model needs to be ranked
	// and an item to go unflagged (flag few_answers); 0 means none.
	MinAnswers int `json:"min_answers"`
	// GradTol is the first-order certificate's tolerance: the largest
	// projected gradient per answer a converged fit may have (0 in folders
	// written before it).
	GradTol float64 `json:"grad_tol,omitempty"`
	// Prior is the fit's prior in model.ParsePrior's grammar: "none" for
	// joint maximum likelihood, or its terms ("theta=normal(0,1),..."),
	// as PriorSpec reads it; absent in folders written before priors,
	// which were joint maximum likelihood fits.
	Prior string `json:"prior,omitempty"`
}

// PriorSpec is the fit's prior: settings.prior read by model.ParsePrior,
// none where it is absent (folders written before priors).
func (s Settings) PriorSpec() (model.Prior, error) {
	if s.Prior == "" {
		return model.Prior{}, nil
	}
	return model.ParsePrior(s.Prior)
}

// RankMove is a model whose ability rank and accuracy rank differ by more
// than the threshold.
type RankMove struct {
	Model        string `json:"model"`
	Rank         int    `json:"rank"`
	AccuracyRank int    `json:"accuracy_rank"`
	Move         int    `json:"move"` // AccuracyRank − Rank: positive means IRT ranks it higher
}

// GroupLoading is an item group's mean varimax loading on each dimension.
type GroupLoading struct {
	Group       string    `json:"group"`
	Items       int       `json:"items"`
	MeanLoading []float64 `json:"mean_loading"`
}

// Doc is fit.json.
type Doc struct {
	Version     string    `json:"jeirt_version"`
	Settings    Settings  `json:"settings"`
	Models      int       `json:"models"`
	Items       int       `json:"items"`
	Observed    int       `json:"observed"`
	LossHistory []float64 `json:"loss_history"`
	Loss        float64   `json:"loss"`
	Iterations  int       `json:"iterations"`
	Converged   bool      `json:"converged"`
	// ConvergenceNote says why Converged is false, or which parameters the
	// data leave without a finite estimate.
	ConvergenceNote  string  `json:"convergence_note,omitempty"`
	Seconds          float64 `json:"seconds"`
	BootstrapSeconds float64 `json:"bootstrap_seconds,omitempty"`
	// BootstrapCompleted is the number of bootstrap replicates the
	// intervals come from (settings.bootstrap asked for; fewer when the
	// run was interrupted); absent without a bootstrap.
	BootstrapCompleted *int `json:"bootstrap_completed,omitempty"`
	// Interrupted says the run was stopped (Ctrl-C) during the bootstrap:
	// the fit is complete, the intervals come from BootstrapCompleted
	// replicates (none below 2).
	Interrupted   bool           `json:"interrupted,omitempty"`
	KendallTau    model.Float    `json:"kendall_tau_vs_accuracy"`    // NaN (null) for a constant ranking
	KendallNote   string         `json:"kendall_tau_note,omitempty"` // why KendallTau is null
	RankMoves     []RankMove     `json:"rank_moves"`
	FlagCounts    map[string]int `json:"flag_counts"`
	GroupLoadings []GroupLoading `json:"group_loadings,omitempty"`
	BatchFits     int            `json:"batch_fits,omitempty"` // fitted together with this many files in one run; Seconds is that run's
	Gauge         string         `json:"gauge"`
	// PriorFitted is the prior the fit ran under when settings.prior
	// leaves scales to the data (normal(MEAN,auto)): the estimated scales
	// in place of auto, and how they were estimated. Absent otherwise.
	PriorFitted string `json:"prior_fitted,omitempty"`
	// Intervals says where the standard errors and intervals of items.csv
	// and abilities.csv come from (absent in older folders: the bootstrap).
	Intervals string `json:"intervals,omitempty"`
	// Parameterisation states items.csv's columns in words (Parameterisation).
	Parameterisation string `json:"parameterisation,omitempty"`
	// Diagnostics are the test's reliability figures and the rules of the
	// item flags (absent in folders written before them).
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	// MaxGradient is the first-order certificate of the written fit: the
	// largest projected gradient of the objective per answer (parameters
	// without a finite estimate left out); Converged needs it at most
	// settings.grad_tol (for mml: the marginal log-likelihood's, or log
	// posterior's, gradient in each item's a and d at the written items).
	// Absent (null) in folders written before it.
	MaxGradient model.Float `json:"max_gradient"`
	// Starts are the starting points the fit was run from, each to its own
	// end (the written fit is the one marked chosen); StartsAgree says
	// whether they all reached the chosen optimum (StartsNote: where not).
	// Nested names the nested model whose fit is one of the starts (1pl
	// for a 2pl, 2pl for a 3pl, "rank r-1" at rank r), NestedLoss its
	// objective in this model's terms, which the written loss never exceeds.
	Starts      []Start `json:"starts,omitempty"`
	StartsAgree *bool   `json:"starts_agree,omitempty"`
	StartsNote  string  `json:"starts_note,omitempty"`
	Nested      string  `json:"nested,omitempty"`
	NestedLoss  float64 `json:"nested_loss,omitempty"`
	// FitStatistics are the log-likelihood at the estimate, the log-prior
	// and the information criteria (absent in folders written before them).
	FitStatistics *FitStatistics `json:"fit_statistics,omitempty"`
}

// FitStatistics is the "fit_statistics" object of fit.json: the
// log-likelihood at the estimate and the log-prior apart from it (so that
// loss = −(log_likelihood + log_prior)), the number of parameters k and
// BIC's n, AIC = −2·log_likelihood + 2k and BIC = −2·log_likelihood + k·ln n
// (null where undefined: graded scores), and what each means in words.
type FitStatistics struct {
	LogLikelihood model.Float `json:"log_likelihood"`
	LogPrior      float64     `json:"log_prior"`
	Parameters    int         `json:"parameters"`
	N             int         `json:"n"`
	AIC           model.Float `json:"aic"`
	BIC           model.Float `json:"bic"`
	// Likelihood says which likelihood (joint, marginal, quasi), LogPriorText
	// what the log-prior holds, and Counting how k and n are taken.
	Likelihood   string `json:"likelihood"`
	LogPriorText string `json:"log_prior_terms"`
	Counting     string `json:"counting"`
}

// Start is one entry of fit.json's "starts": where a fit began (Name:
// "svd" for the truncated-SVD start, or the nested model's fit: 1pl,
// 2pl, "rank 1", ...), the objective there and at its end, its
// iterations, certificate and convergence, and how far its fitted
// probabilities are from the chosen start's on the observed cells.
type Start struct {
	Name        string      `json:"name"`
	StartLoss   model.Float `json:"start_loss"`
	Loss        float64     `json:"loss"`
	Iterations  int         `json:"iterations"`
	MaxGradient model.Float `json:"max_gradient"`
	Converged   bool        `json:"converged"`
	Chosen      bool        `json:"chosen,omitempty"`
	// MaxProbDiff is the largest |P − P_chosen| over the observed cells.
	MaxProbDiff model.Float `json:"max_prob_diff"`
	// Merged says when the start was stopped because it had reached
	// another start's optimum (within the guard's tolerance on every
	// cell's probability): it agrees with it, and was not run to its end.
	Merged string `json:"merged,omitempty"`
}

// Diagnostics is the "diagnostics" object of fit.json: the test's
// reliability and how each item flag is decided.
type Diagnostics struct {
	CronbachAlpha model.Float `json:"cronbach_alpha"`
	AlphaMissing  string      `json:"alpha_missing"` // how missing cells enter α
	// MarginalReliability and EmpiricalReliability are null at rank > 1.
	MarginalReliability  model.Float `json:"marginal_reliability"`
	EmpiricalReliability model.Float `json:"empirical_reliability"`
	// ExtremeModels: models all right or all wrong, left out of infit and outfit.
	ExtremeModels int `json:"extreme_models"`
	// Flags states the rule of each item flag, with its reference.
	Flags map[string]string `json:"flags"`
	// Columns states items.csv's diagnostic columns in words.
	Columns string `json:"columns"`
}

// Family is the fit's response function, model.TwoPL for older folders
// (Model ""). It does not check the name: Read does, by model.ParseFamily.
func (s Settings) Family() model.Family {
	if s.Model == "" {
		return model.TwoPL
	}
	return model.Family(s.Model)
}

// Parameterisation3PL is Parameterisation for a 3PL fit.
const Parameterisation3PL = "mirt slope-intercept with a lower asymptote: P = c + (1 - c) sigmoid((theta.a + d)/sigma); a slope(s), d intercept, c lower asymptote (guessing); b difficulty = -d/a at rank 1 (mirt IRTpars, where P = (1 + c)/2), -d/|a| (MDIFF) at rank > 1; b rises with difficulty"

// Parameterisation of items.csv, as fit.json states it. Folders written
// before it existed have no "d" column: their "b" is the intercept, and Read
// converts them.
const Parameterisation = "mirt slope-intercept: P = sigmoid((theta.a + d)/sigma); a slope(s), d intercept; b difficulty = -d/a at rank 1 (mirt IRTpars), -d/|a| (multidimensional difficulty MDIFF) at rank > 1; b rises with difficulty"

// Gauge texts of fit.json.
const (
	GaugeJML    = "theta: mean 0, sd 1 (population) per dimension over models; a >= 0; x = theta.a + d unchanged (d: the intercept of items.csv); P = sigmoid(x/sigma)"
	GaugeSigned = "theta: mean 0, uncorrelated, sd 1 (population) per dimension over models; a of either sign, varimax-rotated, each dimension's loadings summing positive; x = theta.a + d unchanged (d: the intercept of items.csv); P = sigmoid(x/sigma)"
	GaugeMML    = "theta ~ N(0,1) prior (marginal ML, 61 points on [-6, 6]); theta is the EAP; a unconstrained; P = sigmoid(theta*a + d)"
	// GaugeMAP and GaugeSignedMAP are a fit's under a prior (settings.prior):
	// the prior fixes the gauge, and the fit is written as fitted.
	GaugeMAP       = "theta ~ N(0, theta's prior sd^2) per dimension (settings.prior; maximum a posteriori, written as fitted: theta's mean and sd over models are what the fit found, not rescaled); a >= 0; x = theta.a + d (d: the intercept of items.csv); P = sigmoid(x/sigma)"
	GaugeSignedMAP = "theta ~ N(0, theta's prior sd^2) per dimension (settings.prior; maximum a posteriori, not rescaled); a of either sign, varimax-rotated (a rotation, under which the centred priors are unchanged); x = theta.a + d unchanged (d: the intercept of items.csv); P = sigmoid(x/sigma)"
)

// Model is one row of abilities.csv. Theta, SE, Lo and Hi have Rank values;
// SE, Lo and Hi are NaN without a bootstrap, RankLo and RankHi 0. NObs is
// the number of observed answers and Flag "" or "few_answers" (fewer than
// settings.min_answers: not ranked).
type Model struct {
	Name           string
	Theta          []float64
	SE, Lo, Hi     []float64
	Score          float64 // θ at rank 1, the score column at rank > 1
	Rank           int     // by Score, 1 = best; 0 (blank): a model with too few observations, not ranked
	RankLo, RankHi int     // bootstrap rank interval
	Accuracy       float64
	AccuracyRank   int
	NObs           int
	Flag           string
	// PersonFit is the model's person fit; nil writes empty cells (rows
	// placed by add-model, folders written before it).
	PersonFit *PersonFit
}

// PersonFit is a model's person fit in abilities.csv (NaN: undefined):
// Snijders' lz* (lz_star) and the infit and outfit mean squares of its
// residuals.
type PersonFit struct {
	LZStar, Infit, Outfit float64
}

// PersonFitColumns are abilities.csv's person-fit columns, last in every row.
var PersonFitColumns = []string{"lz_star", "infit", "outfit"}

// InformationPoint is one row of information.csv: θ, the test information
// I(θ) and the standard error of θ there, 1/√I(θ).
type InformationPoint struct {
	Theta, Information, SE float64
}

// Move is how many places the IRT rank is above the accuracy rank.
func (m Model) Move() int { return m.AccuracyRank - m.Rank }

// Item is one row of items.csv, in mirt's slope-intercept form
// P = sigmoid((θ·a + d)/σ): the slope a_j (Rank values), the intercept d_j
// (cBMM's b_j) and the difficulty B = −d/a (rank 1; mirt's IRTpars b) or
// MDIFF = −d/‖a‖ (rank > 1), which rises with difficulty (NaN when a = 0);
// their bootstrap SEs and (rank 1) intervals (NaN without a bootstrap); the
// observed rate of correct answers, the number of observed cells and the
// flag ("", never_solved, always_solved or uninformative).
type Item struct {
	ID                 string
	A                  []float64
	D                  float64 // intercept
	B                  float64 // difficulty, model.Difficulty(A, D)
	SEA                []float64
	SED, SEB           float64
	PCorrect           float64
	NObs               int
	Flag               string
	ALo, AHi, DLo, DHi float64
	BLo, BHi           float64
	// Diagnostics (NaN when undefined or absent): the item-total and
	// rest-score correlations, infit and outfit mean squares and their
	// standardised values.
	ItemTotal, ItemRest            float64
	Infit, InfitZ, Outfit, OutfitZ float64
	// C is the 3PL's lower asymptote and SEC its bootstrap SE (NaN when
	// the fit has none, or no bootstrap of fitted c); Trials the trials of
	// the item's observed cells (NaN for 0/1 answers: one per cell).
	C, SEC float64
	Trials float64
}

// Flags are the item's flags (Flag split at ";").
func (it Item) Flags() []string {
	if it.Flag == "" {
		return nil
	}
	return strings.Split(it.Flag, ";")
}

// DiagnosticColumns are items.csv's diagnostic columns, last in every row.
var DiagnosticColumns = []string{"item_total_r", "item_rest_r", "infit", "infit_zstd", "outfit", "outfit_zstd"}

func (it *Item) diagnostics() []*float64 {
	return []*float64{&it.ItemTotal, &it.ItemRest, &it.Infit, &it.InfitZ, &it.Outfit, &it.OutfitZ}
}

// Folder is everything a fit folder holds.
type Folder struct {
	Doc    Doc
	Models []Model
	Items  []Item
	// Information is information.csv (nil: not written, as at rank > 1).
	Information []InformationPoint
}

// Rank is the number of ability dimensions r.
func (f *Folder) Rank() int { return f.Doc.Settings.Rank }

// Sigma is the logistic scale σ (1 when the file does not say).
func (f *Folder) Sigma() float64 {
	if s := f.Doc.Settings.Sigma; s > 0 {
		return s
	}
	return 1
}

// IRT returns the fitted parameters as a model.IRT (θ, A and b in the fit's gauge).
func (f *Folder) IRT() *model.IRT {
	m := &model.IRT{Rank: f.Rank(), Sigma: f.Sigma(), Iterations: f.Doc.Iterations}
	for _, fm := range f.Models {
		m.Models = append(m.Models, fm.Name)
		m.Theta = append(m.Theta, fm.Theta...)
	}
	m.Family = f.Doc.Settings.Family()
	for _, it := range f.Items {
		m.Items = append(m.Items, it.ID)
		m.A = append(m.A, it.A...)
		m.B = append(m.B, it.D)
		if m.Family.HasAsymptote() {
			m.C = append(m.C, it.C)
		}
	}
	return m
}

// TrialsPerAnswer is each item's mean trials per observed cell (1 for 0/1
// answers): the factor by which its information grows.
func (f *Folder) TrialsPerAnswer() []float64 {
	out := make([]float64, len(f.Items))
	for j, it := range f.Items {
		out[j] = 1
		if !math.IsNaN(it.Trials) && it.NObs > 0 {
			out[j] = it.Trials / float64(it.NObs)
		}
	}
	return out
}

// has3PL reports whether the folder's items carry lower asymptotes.
func (f *Folder) has3PL() bool { return f.Doc.Settings.Family().HasAsymptote() }

// hasTrials reports whether some item has trials recorded.
func (f *Folder) hasTrials() bool {
	for _, it := range f.Items {
		if !math.IsNaN(it.Trials) && it.Trials != 0 {
			return true
		}
	}
	return false
}

// Write puts abilities.csv, items.csv, information.csv (when f has it) and
// fit.json into dir, each atomically.
func Write(dir string, f *Folder) error {
	if err := fileio.WriteFileAtomic(filepath.Join(dir, "abilities.csv"), func(w io.Writer) error {
		return writeModels(w, f)
	}); err != nil {
		return err
	}
	if err := fileio.WriteFileAtomic(filepath.Join(dir, "items.csv"), func(w io.Writer) error {
		return writeItems(w, f)
	}); err != nil {
		return err
	}
	if f.Information != nil {
		if err := fileio.WriteFileAtomic(filepath.Join(dir, "information.csv"), func(w io.Writer) error {
			return WriteInformation(w, f.Information)
		}); err != nil {
			return err
		}
	}
	return fileio.WriteFileAtomic(filepath.Join(dir, "fit.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		doc := f.Doc
		doc.Settings.fromFit(dir)
		if doc.RankMoves == nil {
			doc.RankMoves = []RankMove{}
		}
		return enc.Encode(doc)
	})
}

// Cols names a per-dimension column: name at rank 1, name_1 ... name_r above.
func Cols(name string, rank int) []string { return cols(name, rank) }

func cols(name string, rank int) []string {
	if rank == 1 {
		return []string{name}
	}
	out := make([]string, rank)
	for d := range out {
		out[d] = fmt.Sprintf("%s_%d", name, d+1)
	}
	return out
}

func optInt(x int) string {
	if x == 0 {
		return ""
	}
	return strconv.Itoa(x)
}

// AppendDims appends rank CSV cells of v to row, or rank empty cells when
// v is nil, as the fit folder's files write them.
func AppendDims(row []string, v []float64, rank int) []string { return dims(row, v, rank) }

// dims writes rank values of v, or rank empty cells when v is nil.
func dims(row []string, v []float64, rank int) []string {
	for d := 0; d < rank; d++ {
		if v == nil {
			row = append(row, "")
		} else {
			row = append(row, model.FormatFloat(v[d]))
		}
	}
	return row
}

func writeModels(w io.Writer, f *Folder) error {
	rk := f.Rank()
	cw := csv.NewWriter(w)
	var hdr []string
	hdr = append(hdr, "model")
	for _, p := range []string{"theta", "se", "lo", "hi"} {
		hdr = append(hdr, cols(p, rk)...)
	}
	if rk > 1 {
		hdr = append(hdr, "score")
	}
	hdr = append(hdr, "rank", "rank_lo", "rank_hi", "accuracy", "accuracy_rank", "n_obs", "flag")
	hdr = append(hdr, PersonFitColumns...)
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for _, m := range f.Models {
		row := []string{m.Name}
		for _, src := range [][]float64{m.Theta, m.SE, m.Lo, m.Hi} {
			row = dims(row, src, rk)
		}
		if rk > 1 {
			row = append(row, model.FormatFloat(m.Score))
		}
		row = append(row, optInt(m.Rank), optInt(m.RankLo), optInt(m.RankHi),
			model.FormatFloat(m.Accuracy), optInt(m.AccuracyRank), strconv.Itoa(m.NObs), m.Flag)
		if pf := m.PersonFit; pf != nil {
			row = append(row, model.FormatFloat(pf.LZStar), model.FormatFloat(pf.Infit), model.FormatFloat(pf.Outfit))
		} else {
			row = append(row, "", "", "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteAbilities writes models as an abilities.csv of rank rk, header
// included, with the columns Write gives it.
func WriteAbilities(w io.Writer, rk int, models []Model) error {
	return writeModels(w, &Folder{Doc: Doc{Settings: Settings{Rank: rk}}, Models: models})
}

func writeItems(w io.Writer, f *Folder) error {
	rk := f.Rank()
	cw := csv.NewWriter(w)
	hdr := []string{"item"}
	hdr = append(hdr, cols("a", rk)...)
	hdr = append(hdr, "d", "b")
	guess, trials := f.has3PL(), f.hasTrials()
	if guess {
		hdr = append(hdr, "c")
	}
	hdr = append(hdr, cols("se_a", rk)...)
	hdr = append(hdr, "se_d", "se_b")
	if guess {
		hdr = append(hdr, "se_c")
	}
	hdr = append(hdr, "p_correct", "n_obs")
	if trials {
		hdr = append(hdr, "trials")
	}
	hdr = append(hdr, "flag")
	if rk == 1 {
		hdr = append(hdr, "a_lo", "a_hi", "d_lo", "d_hi", "b_lo", "b_hi")
	}
	hdr = append(hdr, DiagnosticColumns...)
	if err := cw.Write(hdr); err != nil {
		return err
	}
	ff := model.FormatFloat
	for _, it := range f.Items {
		row := []string{it.ID}
		row = dims(row, it.A, rk)
		row = append(row, ff(it.D), ff(it.B))
		if guess {
			row = append(row, ff(it.C))
		}
		row = dims(row, it.SEA, rk)
		row = append(row, ff(it.SED), ff(it.SEB))
		if guess {
			row = append(row, ff(it.SEC))
		}
		row = append(row, ff(it.PCorrect), strconv.Itoa(it.NObs))
		if trials {
			row = append(row, ff(it.Trials))
		}
		row = append(row, it.Flag)
		if rk == 1 {
			row = append(row, ff(it.ALo), ff(it.AHi), ff(it.DLo), ff(it.DHi), ff(it.BLo), ff(it.BHi))
		}
		for _, v := range it.diagnostics() {
			row = append(row, ff(*v))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Read reads a folder written by Write. Columns a reader does not need may be
// absent (older folders); a bad number names the file, line and column.
func Read(dir string) (*Folder, error) {
	p := filepath.Join(dir, "fit.json")
	raw, err := fileio.ReadInputFile(p, fileio.MaxDocumentBytes, "fit.json")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a jeirt irt fit folder: no fit.json", dir)
		}
		return nil, err
	}
	f := &Folder{}
	f.Doc.KendallTau = model.Float(math.NaN())
	f.Doc.MaxGradient = model.Float(math.NaN()) // absent: written before the certificate
	if err := json.Unmarshal(raw, &f.Doc); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	rk := f.Rank()
	if rk < 1 || rk > limits.MaxDim {
		return nil, fmt.Errorf("%s: settings.rank %d is not a rank (1 to %d)", p, rk, limits.MaxDim)
	}
	if _, err := model.ParseFamily(f.Doc.Settings.Model); err != nil {
		return nil, fmt.Errorf("%s: settings.model %q is not %s", p, limits.Clip(f.Doc.Settings.Model), model.FamilyNames())
	}
	if _, err := f.Doc.Settings.PriorSpec(); err != nil {
		return nil, fmt.Errorf("%s: settings.prior: %w", p, err)
	}
	counted, err := checkSettings(p, raw, &f.Doc)
	if err != nil {
		return nil, err
	}
	nums := func(get csvtable.Row, name string, required bool) []float64 {
		var v []float64
		for _, c := range cols(name, rk) {
			if required {
				v = append(v, get.Num(c))
			} else {
				v = append(v, get.OptNum(c))
			}
		}
		return v
	}
	// A name twice would have its second row shadow the first wherever
	// rows are looked up by name (irt cat would ask an answered item).
	// csvtable.Read numbers a record's line as 2 + the records before it.
	once := func(path, what, name string, seen map[string]int, line int) error {
		if first, ok := seen[name]; ok {
			return fmt.Errorf("%s:%d: %s %q is also on line %d: each %s has one row", path, line, what, limits.Clip(name), first, what)
		}
		seen[name] = line
		return nil
	}
	seenModel, seenItem := map[string]int{}, map[string]int{}
	err = csvtable.Read(filepath.Join(dir, "abilities.csv"), func(get csvtable.Row) error {
		if last := fmt.Sprintf("theta_%d", rk); rk > 1 && !get.Has(last) {
			return fmt.Errorf("%s: no column %s for settings.rank %d", filepath.Join(dir, "abilities.csv"), last, rk)
		}
		m := Model{Name: get.Str("model"), Theta: nums(get, "theta", true), SE: nums(get, "se", false),
			Lo: nums(get, "lo", false), Hi: nums(get, "hi", false)}
		if rk == 1 {
			m.Score = m.Theta[0]
		} else {
			m.Score = get.Num("score")
		}
		m.Rank, m.RankLo, m.RankHi = get.OptInt("rank"), get.OptInt("rank_lo"), get.OptInt("rank_hi")
		m.Accuracy, m.AccuracyRank = get.Num("accuracy"), get.OptInt("accuracy_rank")
		m.NObs, m.Flag = get.OptInt("n_obs"), get.OptStr("flag")
		if pf := (PersonFit{get.OptNum("lz_star"), get.OptNum("infit"), get.OptNum("outfit")}); !math.IsNaN(pf.LZStar) || !math.IsNaN(pf.Infit) || !math.IsNaN(pf.Outfit) {
			m.PersonFit = &pf
		}
		if err := get.Err(); err != nil {
			return err
		}
		if err := checkModel(dir, len(f.Models)+2, rk, m); err != nil {
			return err
		}
		if err := once(filepath.Join(dir, "abilities.csv"), "model", m.Name, seenModel, len(f.Models)+2); err != nil {
			return err
		}
		f.Models = append(f.Models, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = csvtable.Read(filepath.Join(dir, "items.csv"), func(get csvtable.Row) error {
		it := Item{ID: get.Str("item"), PCorrect: get.OptNum("p_correct"), NObs: get.OptInt("n_obs"), Flag: get.OptStr("flag"),
			ALo: get.OptNum("a_lo"), AHi: get.OptNum("a_hi"), C: get.OptNum("c"), SEC: get.OptNum("se_c"), Trials: get.OptNum("trials")}
		if f.has3PL() && !(it.C >= 0 && it.C < 1) {
			return fmt.Errorf("%s: item %q: the 3PL's lower asymptote c %v is not in [0, 1)", filepath.Join(dir, "items.csv"), limits.Clip(it.ID), it.C)
		}
		it.A = nums(get, "a", true)
		it.SEA = nums(get, "se_a", false)
		for k, v := range it.diagnostics() {
			*v = get.OptNum(DiagnosticColumns[k])
		}
		if get.Has("d") {
			it.D, it.SED, it.DLo, it.DHi = get.Num("d"), get.OptNum("se_d"), get.OptNum("d_lo"), get.OptNum("d_hi")
			it.B, it.SEB, it.BLo, it.BHi = get.OptNum("b"), get.OptNum("se_b"), get.OptNum("b_lo"), get.OptNum("b_hi")
		} else {
			// A folder from before the "d" column: its b is the intercept.
			it.D, it.SED, it.DLo, it.DHi = get.Num("b"), get.OptNum("se_b"), get.OptNum("b_lo"), get.OptNum("b_hi")
			it.B, it.SEB, it.BLo, it.BHi = model.Difficulty(it.A, it.D), math.NaN(), math.NaN(), math.NaN()
		}
		if err := get.Err(); err != nil {
			return err
		}
		dcol := "d"
		if !get.Has("d") {
			dcol = "b"
		}
		if err := checkItem(dir, len(f.Items)+2, rk, it, dcol); err != nil {
			return err
		}
		if err := once(filepath.Join(dir, "items.csv"), "item", it.ID, seenItem, len(f.Items)+2); err != nil {
			return err
		}
		f.Items = append(f.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(f.Models) == 0 || len(f.Items) == 0 {
		return nil, fmt.Errorf("%s: no models or no items", dir)
	}
	if err := checkCounts(dir, f, counted); err != nil {
		return nil, err
	}
	if f.Information, err = readInformation(filepath.Join(dir, "information.csv")); err != nil {
		return nil, err
	}
	return f, nil
}

// OutNames names the sub-folder of each response file of a batch fit: its
// name from names (the --name flags) when given, else the file's base name
// without extension; files sharing a base name take their folder's name
// instead (data/tumlu/response_matrix.csv -> tumlu), and a name still taken
// gets -2, -3, ... in data order.
func OutNames(data, names []string) ([]string, error) {
	if len(names) > 0 {
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) {
				return nil, model.FieldErrorf("Names", "{Names} %q: want a plain folder name", n)
			}
			if seen[n] {
				return nil, model.FieldErrorf("Names", "{Names} %q given twice", n)
			}
			seen[n] = true
		}
		return names, nil
	}
	stem := func(p string) string {
		b := filepath.Base(p)
		return strings.TrimSuffix(b, filepath.Ext(b))
	}
	count := map[string]int{}
	for _, p := range data {
		count[stem(p)]++
	}
	out := make([]string, len(data))
	taken := map[string]bool{}
	for k, p := range data {
		n := stem(p)
		if count[n] > 1 {
			if d := filepath.Base(filepath.Dir(filepath.Clean(p))); d != "." && d != ".." && d != string(filepath.Separator) {
				n = d
			}
		}
		if n == "" || n == "." || n == ".." {
			n = "fit"
		}
		base := n
		for i := 2; taken[n]; i++ {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		taken[n] = true
		out[k] = n
	}
	return out, nil
}

// WriteSelection writes the items `jeirt irt select` kept: item, a (a_1 ...
// a_r), the intercept d, the difficulty b (as in items.csv) and the ability θ
// at which each was chosen (at[k] for items[k], an index into fit.Items).
func WriteSelection(w io.Writer, fit *model.IRT, items []int, at []float64) error {
	rk := fit.Rank
	cw := csv.NewWriter(w)
	hdr := append([]string{"item"}, cols("a", rk)...)
	hdr = append(hdr, "d", "b", "chosen_at_theta")
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for k, j := range items {
		row := dims([]string{fit.Items[j]}, fit.A[j*rk:(j+1)*rk], rk)
		a := fit.A[j*rk : (j+1)*rk]
		row = append(row, model.FormatFloat(fit.B[j]), model.FormatFloat(model.Difficulty(a, fit.B[j])), model.FormatFloat(at[k]))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// RecordedDevice is the device the fit in dir asked for (its
// settings.device), or "" when fit.json cannot be read (the command's own
// read then says why).
func RecordedDevice(dir string) string {
	b, err := fileio.ReadInputFile(filepath.Join(dir, "fit.json"), fileio.MaxDocumentBytes, "fit.json")
	var doc struct {
		Settings struct {
			Device string `json:"device"`
		} `json:"settings"`
	}
	if err != nil || json.Unmarshal(b, &doc) != nil {
		return ""
	}
	return doc.Settings.Device
}
