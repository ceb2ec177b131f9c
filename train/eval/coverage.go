package eval

import "github.com/jeirt/jeirt/model"

// Needs says what a baseline must have seen in training to predict a cell
// from what it learned: a parameter per question (Item), per model (Model).
// The means need one of them, kNN the model's answers, the IRT fits both;
// the text forms (MF's, NCF's) predict new questions from their text.
type Needs struct{ Item, Model bool }

// Fallback replaces, in pred (for the cells of r, which shares trainR's
// models and items), the predictions of cells a baseline with needs cannot
// make by their fallback: the model's training accuracy (ModelMeanPredict)
// for a question without training cells, the question's (ItemMeanPredict)
// for a model without, the training rate (MajorityPredict) for both. It
// returns how many cells were of such questions and of such models (a cell
// of both counts in both), and how many were replaced.
func Fallback(needs Needs, trainR, r *model.Responses, pred []float64) (newItems, newModels, replaced int) {
	byItem, byModel := trainR.ByItem(), trainR.ByModel()
	var modelRate, itemRate []float64
	mean := trainR.MeanCorrect()
	for c := range pred {
		i, j := int(r.Model[c]), int(r.Item[c])
		noItem := needs.Item && len(byItem.Row(j)) == 0
		noModel := needs.Model && len(byModel.Row(i)) == 0
		switch {
		case noItem && noModel:
			pred[c] = mean
		case noItem:
			if modelRate == nil {
				modelRate = shrunkRates(byModel, trainR, mean)
			}
			pred[c] = modelRate[i]
		case noModel:
			if itemRate == nil {
				itemRate = shrunkRates(byItem, trainR, mean)
			}
			pred[c] = itemRate[j]
		}
		if noItem || noModel {
			replaced++
		}
		if noItem {
			newItems++
		}
		if noModel {
			newModels++
		}
	}
	return newItems, newModels, replaced
}
