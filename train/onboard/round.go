package onboard

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
	"github.com/jeirt/jeirt/train/jeirt"
)

// Round asks which K questions a new model should answer next.
type Round struct {
	Onboard
	K      int
	Design string // v-optimal (""), d-optimal or random
	Seed   int64  // of the random design

	// Pool is the candidate questions (ids and texts); nil means the
	// checkpoint's known items.
	Pool *read.ItemTable
	// Answered holds the new model's answers so far (nil: none yet). Its row
	// is fitted from them and the next questions are designed at that row
	// (v-optimal or random), never one already answered. Model picks the new
	// model when Answered has several.
	Answered     *model.Responses
	AnsweredFile string // where Answered was read from, for errors
	Model        string

	// Log receives a line for each question set encoded; nil discards.
	Log io.Writer
}

// RoundResult is a suggestion round: the picks index IDs and Texts.
type RoundResult struct {
	IDs, Texts []string
	Picks      []Suggested
	// With Answered: the model placed, how many questions it has answered
	// and how many right.
	Model             string
	Answers, AnsRight int
}

// Check reports settings that cannot go together, before anything is read.
func (o Round) Check() error {
	answered := o.Answered != nil || o.AnsweredFile != ""
	switch o.Design {
	case "", "v-optimal", "random":
	case "d-optimal":
		if answered {
			return fmt.Errorf("add-model: --answered designs are v-optimal (or random); got --design d-optimal")
		}
	default:
		return fmt.Errorf("add-model: --design %q: want v-optimal, d-optimal or random", o.Design)
	}
	if o.Model != "" && !answered {
		return fmt.Errorf("add-model: --models goes with --responses or, with --suggest, with --answered")
	}
	return nil
}

// Suggest runs one round on checkpoint ck.
func (o Round) Suggest(ctx context.Context, ck *model.Checkpoint) (*RoundResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	m := ck.Model
	res := &RoundResult{}
	var q [][]float32
	if o.Pool == nil {
		res.IDs = m.Items
		res.Texts = make([]string, len(m.Items))
		for j := range m.Items {
			q = append(q, m.ItemEmbedding(j))
		}
	} else {
		res.IDs, res.Texts = o.Pool.IDs, o.Pool.Text
		var err error
		q, _, err = jeirt.Questions(ctx, ck, &model.Responses{Items: o.Pool.IDs, ItemText: o.Pool.Text}, nil, o.Log)
		if err != nil {
			return nil, err
		}
	}
	prior, err := o.PriorFor(m)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Answered != nil:
		post, done, perr := o.answeredPosterior(ctx, ck, res, prior)
		if perr != nil {
			return nil, perr
		}
		if o.Design == "random" {
			res.Picks, err = SuggestRandom(q, o.K, uint64(o.Seed), done, post.Mean)
		} else {
			res.Picks, err = SuggestNext(ctx, q, o.K, post, done)
		}
	case o.Design == "random":
		res.Picks, err = SuggestRandom(q, o.K, uint64(o.Seed), nil, prior.Mean)
	case o.Design == "d-optimal":
		res.Picks, err = SuggestItems(ctx, m, q, o.K, prior)
	default:
		res.Picks, err = SuggestItemsV(ctx, m, q, o.K, prior)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// answeredPosterior fits the new model's row from its answers so far and
// returns the row's posterior and which candidate questions it has answered.
func (o Round) answeredPosterior(ctx context.Context, ck *model.Checkpoint, res *RoundResult, prior Gaussian) (Gaussian, []bool, error) {
	r := o.Answered
	name := o.Model
	switch {
	case name != "" && strings.Contains(name, ","):
		return Gaussian{}, nil, fmt.Errorf("add-model: --suggest --answered places one model; got --models %s", name)
	case name == "" && r.NumModels() != 1:
		return Gaussian{}, nil, fmt.Errorf("%s: answers of %d models; pick the new one with --models NAME", o.AnsweredFile, r.NumModels())
	case name == "":
		name = r.Models[0]
	}
	mi := r.ModelIndex(name)
	if mi < 0 {
		return Gaussian{}, nil, fmt.Errorf("%s: no answers of model %q (it has %s)", o.AnsweredFile, name, strings.Join(r.Models, ", "))
	}
	cells := r.ByModel().Row(mi)
	want := make([]bool, r.NumItems()) // the items it answered
	answered := make(map[string]bool, len(cells))
	var correct int
	for _, c := range cells {
		want[r.Item[c]] = true
		answered[r.Items[r.Item[c]]] = true
		correct += int(r.Label[c])
	}
	qa, _, err := jeirt.Questions(ctx, ck, r, want, o.Log)
	if err != nil {
		return Gaussian{}, nil, fmt.Errorf("%s: %w", o.AnsweredFile, err)
	}
	data := &RowData{Dim: ck.Model.Dim}
	for _, c := range cells {
		data.Add(qa[r.Item[c]], r.Label[c])
	}
	post, err := o.Posterior(data, prior)
	if err != nil {
		return Gaussian{}, nil, err
	}
	done := make([]bool, len(res.IDs))
	for j, id := range res.IDs {
		done[j] = answered[id]
	}
	res.Model, res.Answers, res.AnsRight = name, len(cells), correct
	return post, done, nil
}

// WriteCSV writes the picks as an items CSV jeirt reads back with --items:
// item_id,text,rank,p_mean,gain (P and gain to 4 decimals; empty where NaN).
func (res *RoundResult) WriteCSV(w io.Writer) error {
	num := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"item_id", "text", "rank", "p_mean", "gain"})
	for k, s := range res.Picks {
		cw.Write([]string{res.IDs[s.Index], res.Texts[s.Index], strconv.Itoa(k + 1), num(s.P), num(s.Gain)})
	}
	cw.Flush()
	return cw.Error()
}
