package catrun

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
)

// ReadAnswers reads the responses file path as the commands do and gives
// each chosen model (default: every model with an answer) its answers to
// f's items: the models, and for each the item indices, the scores (the
// fraction correct: 0 or 1, k/n of k-of-n cells, or a graded score read
// with opt.Graded) and the trials behind each (nil when the file has one
// trial per cell).
func (f *Fit) ReadAnswers(path string, opt read.Options, models []string, log model.Logf) ([]string, [][]int, [][]float64, [][]float64, error) {
	r, err := readAnswers(path, opt, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	models, items, cells, err := f.cellsOf(r, path, models, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ys, trials := make([][]float64, len(models)), make([][]float64, len(models))
	for k, cs := range cells {
		for _, c := range cs {
			ys[k] = append(ys[k], r.ScoreAt(int(c)))
			if r.Weighted() {
				trials[k] = append(trials[k], float64(r.TrialsAt(int(c))))
			}
		}
	}
	if !r.Weighted() {
		trials = nil
	}
	return models, items, ys, trials, nil
}
