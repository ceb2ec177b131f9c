package onboard

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
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

	// Log receives a line for each question set encoded; nil is silent.
	Log progress.Logf
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
			return model.FieldErrorf("Design", "add-model suggest: {AnsweredFile} (answers) designs are v-optimal (or random); got {Design} d-optimal")
		}
	default:
		return model.FieldErrorf("Design", "add-model: {Design} %q: want v-optimal, d-optimal or random", o.Design)
	}
	if o.Model != "" && !answered {
		return model.FieldErrorf("Model", "add-model: {Model} goes with {AnsweredFile} (the new models' answers)")
	}
	return nil
}

// Suggest runs one round on checkpoint ck.
func (o Round) Suggest(ctx context.Context, ck *checkpoint.Checkpoint) (*RoundResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	m := ck.Model
	res := &RoundResult{}
	var q [][]float32
	if o.Pool == nil {
		res.IDs = m.Items
		res.Texts = CheckpointTexts(ck, o.Log)
		for j := range m.Items {
			q = append(q, m.ItemEmbedding(j))
		}
	} else {
		res.IDs, res.Texts = o.Pool.IDs, o.Pool.Text
		var err error
		q, _, _, err = jeirt.Questions(ctx, ck, &model.Responses{Items: o.Pool.IDs, ItemText: o.Pool.Text}, nil, o.Log)
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
func (o Round) answeredPosterior(ctx context.Context, ck *checkpoint.Checkpoint, res *RoundResult, prior Gaussian) (Gaussian, []bool, error) {
	r := o.Answered
	name := o.Model
	switch {
	case name != "" && strings.Contains(name, ","):
		return Gaussian{}, nil, model.FieldErrorf("Model", "add-model suggest: {AnsweredFile} places one model; got {Model} %s", name)
	case name == "" && r.NumModels() != 1:
		return Gaussian{}, nil, model.FieldErrorf("Model", "%s: answers of %d models; pick the new one with {Model} NAME", o.AnsweredFile, r.NumModels())
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
	qa, _, _, err := jeirt.Questions(ctx, ck, r, want, o.Log)
	if err != nil {
		return Gaussian{}, nil, fmt.Errorf("%s: %w", o.AnsweredFile, err)
	}
	data := &RowData{Dim: ck.Model.Dim}
	for _, c := range cells {
		data.AddCell(qa[r.Item[c]], r, int(c))
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
// item,text,rank,p_mean,gain (P and gain to 4 decimals; empty where NaN).
func (res *RoundResult) WriteCSV(w io.Writer) error {
	num := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', 4, 64)
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"item", "text", "rank", "p_mean", "gain"})
	for k, s := range res.Picks {
		cw.Write([]string{res.IDs[s.Index], res.Texts[s.Index], strconv.Itoa(k + 1), num(s.P), num(s.Gain)})
	}
	cw.Flush()
	return cw.Error()
}

// CheckpointTexts are the texts of the checkpoint's items, in its order,
// read from the item-text file (or the responses, when they carry texts) its
// training config names. Items it cannot find keep an empty text, and log
// says so.
func CheckpointTexts(ck *checkpoint.Checkpoint, log progress.Logf) []string {
	texts := make([]string, len(ck.Model.Items))
	var cfg struct {
		Data struct{ Responses, Items, Format, Train string } `json:"data"`
	}
	_ = json.Unmarshal(ck.Manifest.Config, &cfg)
	byID := map[string]string{}
	var src string
	switch {
	case cfg.Data.Items != "":
		src = cfg.Data.Items
		items, err := read.Items(src)
		if err != nil {
			log.Printf("suggest: the text column is empty: cannot read the checkpoint's items %s (%v); give --pool", src, err)
			return texts
		}
		for k, id := range items.IDs {
			byID[id] = items.Text[k]
		}
	case cfg.Data.Responses != "" || cfg.Data.Train != "":
		src = cmp.Or(cfg.Data.Responses, cfg.Data.Train)
		r, _, err := read.File(src, read.Options{Format: cfg.Data.Format})
		if err != nil || r.ItemText == nil {
			log.Printf("suggest: the text column is empty: the checkpoint's data %s gives no item texts; give --pool", src)
			return texts
		}
		for k, id := range r.Items {
			byID[id] = r.ItemText[k]
		}
	default:
		log.Printf("suggest: the text column is empty: the checkpoint records no item-text file; give --pool")
		return texts
	}
	missing := 0
	for j, id := range ck.Model.Items {
		if texts[j] = byID[id]; texts[j] == "" {
			missing++
		}
	}
	if missing > 0 {
		log.Printf("suggest: %d of the checkpoint's %d items have no text in %s", missing, len(texts), src)
	}
	return texts
}
