package jeirt

import (
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
)

// trainingDomain is the out-of-domain reference of a checkpoint: the encoder
// vectors (features, NumItems x dim) of the items with training cells in
// trainR. It is nil when fewer than two items were trained on.
func trainingDomain(trainR *model.Responses, features []float32, dim int) (*checkpoint.Domain, error) {
	seen := make([]bool, trainR.NumItems())
	for _, j := range trainR.Item {
		seen[j] = true
	}
	var rows []int
	for j, ok := range seen {
		if ok {
			rows = append(rows, j)
		}
	}
	if len(rows) < 2 {
		return nil, nil
	}
	return checkpoint.NewDomain(features, dim, rows, 0)
}
