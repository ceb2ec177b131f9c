package jeirt

import (
	"context"
	"fmt"
	"math"

	"github.com/jeirt/jeirt/encoder"
	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/checkpoint"
	"github.com/jeirt/jeirt/model/progress"
	"github.com/jeirt/jeirt/train/eval"
)

// EncodeItems returns the encoder vector of every item of r, row-major
// (NumItems x enc.Dim()). An encoder keyed by item id (precomputed vectors)
// is asked by id; otherwise items are encoded by text, and items without text
// by their id (with a warning on log).
func EncodeItems(ctx context.Context, enc encoder.Encoder, r *model.Responses, log progress.Logf) ([]float32, error) {
	return EncodeItemsCached(ctx, enc, r, "", log)
}

// EncodeItemsCached is EncodeItems reading and filling the embedding cache in
// folder cache (encoder.Cache; none when cache is "").
func EncodeItemsCached(ctx context.Context, enc encoder.Encoder, r *model.Responses, cache string, log progress.Logf) ([]float32, error) {
	texts := make([]string, r.NumItems())
	if _, byID := enc.(encoder.ItemEncoder); !byID {
		missing := 0
		for j := range texts {
			if r.ItemText != nil && r.ItemText[j] != "" {
				texts[j] = r.ItemText[j]
			} else {
				texts[j] = r.Items[j]
				missing++
			}
		}
		if missing > 0 {
			log.Printf("warning: %d of %d items have no text; their ids are encoded instead (give data.items for real question text)", missing, len(texts))
		}
	}
	opt := encoder.ItemOptions{}
	if cache != "" {
		opt.Cache = &encoder.Cache{Dir: cache}
	}
	vecs, err := encoder.EncodeItems(ctx, enc, r.Items, texts, opt)
	if err != nil {
		return nil, err
	}
	D := enc.Dim()
	out := make([]float32, 0, len(vecs)*D)
	for j, v := range vecs {
		if len(v) != D {
			return nil, fmt.Errorf("encoder %s: item %s has a vector of length %d, want %d", enc.Fingerprint(), r.Items[j], len(v), D)
		}
		out = append(out, v...)
	}
	return out, nil
}

// PredictJEIRT returns P(correct) for every cell of r, whose Models and Items
// must be those of the model (as after training).
func PredictJEIRT(m *model.JEIRT, r *model.Responses) []float64 {
	p := make([]float64, r.Len())
	for c := range p {
		p[c] = m.Prob(int(r.Model[c]), m.ItemEmbedding(int(r.Item[c])))
	}
	return p
}

// JEIRTGeometry computes Geometry over all cells of r (indexed as m).
func JEIRTGeometry(m *model.JEIRT, r *model.Responses) checkpoint.Geometry {
	acc := r.ItemAccuracy()
	var norms, errRate []float64
	for j, a := range acc {
		if math.IsNaN(a) {
			continue
		}
		norms = append(norms, model.Norm(m.ItemEmbedding(j)))
		errRate = append(errRate, 1-a)
	}
	g := checkpoint.Geometry{NormErrorSpearman: model.Float(eval.Spearman(norms, errRate)), Items: len(norms),
		NormErrorNote: eval.CorrelationNote("|q|", norms, "the item error rate", errRate)}
	if r.ItemGroup != nil {
		byGroup := map[string][]int{}
		for j, grp := range r.ItemGroup {
			if grp != "" {
				byGroup[grp] = append(byGroup[grp], j)
			}
		}
		if len(byGroup) > 0 {
			g.ProjectionByGroup = map[string]map[string]float64{}
			for grp, items := range byGroup {
				row := map[string]float64{}
				for i, name := range m.Models {
					var s float64
					for _, j := range items {
						s += m.Projection(i, m.ItemEmbedding(j))
					}
					row[name] = s / float64(len(items))
				}
				g.ProjectionByGroup[grp] = row
			}
		}
	}
	return g
}
