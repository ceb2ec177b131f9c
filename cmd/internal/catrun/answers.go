package catrun

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read"
)

// ReadAnswers reads the responses file path as the commands do and gives
// each chosen model (default: every model with an answer) its answers to
// f's items: the models, and for each the item indices and the answers.
func (f *Fit) ReadAnswers(path string, opt read.Options, models []string, log model.Logf) ([]string, [][]int, [][]uint8, error) {
	r, err := readAnswers(path, opt, log)
	if err != nil {
		return nil, nil, nil, err
	}
	return f.answersOf(r, path, models, log)
}
