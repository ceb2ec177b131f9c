package transformer_test

import (
	"context"
	"fmt"

	"github.com/jeirt/jeirt/encoder/transformer"
)

// A ModernBERT sentence-transformers folder you downloaded (here
// gte-modernbert-base) opens by its config.json; its 1_Pooling config says
// CLS or mean. MPNet folders (all-mpnet-base-v2) open the same way.
func ExampleOpenModernBERT() {
	m, err := transformer.OpenModernBERT("models/gte-modernbert-base")
	if err != nil {
		fmt.Println(err)
		return
	}
	m.BatchSize = 16
	vecs, err := m.Encode(context.Background(), []string{"Fix the failing test in utils.py"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(vecs[0]), m.Pooling, m.MaxSeqLen)
}
