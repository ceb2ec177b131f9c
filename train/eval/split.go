package eval

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/jeirt/jeirt/model"
)

// SplitOptions configures Split.
type SplitOptions struct {
	Val, Test float64 // fractions held out for validation and test; Val+Test < 1
	Seed      int64
	// By is the unit held out: cell (the default) holds out random observed
	// cells; model holds out whole models (the new-model experiment); item
	// holds out whole questions (the new-question experiment); benchmark
	// holds out whole item groups (r.ItemGroup, the category or benchmark
	// column: out-of-distribution generalisation, see SplitByBenchmark).
	By string
	// Hold names the benchmarks held out for test with By "benchmark";
	// empty means round(Test·G) of the G benchmarks drawn at random.
	Hold []string
}

// Split divides r into train, validation and test responses, reproducibly for a
// seed. By cell, round(Val·n) and round(Test·n) random cells go to validation
// and test; by model or item, that many whole models or items, with all their
// cells. All three keep r's full model and item lists so indices stay
// comparable; cells keep their order.
func Split(r *model.Responses, opt SplitOptions) (trainR, valR, testR *model.Responses, err error) {
	if !(opt.Val >= 0 && opt.Test >= 0 && opt.Val+opt.Test < 1) {
		return nil, nil, nil, fmt.Errorf("split: val %v and test %v must be non-negative with val+test < 1", opt.Val, opt.Test)
	}
	by := opt.By
	if by == "" {
		by = "cell"
	}
	if by == "benchmark" {
		return SplitByBenchmark(r, opt)
	}
	var units int
	switch by {
	case "cell":
		units = r.Len()
	case "model":
		units = r.NumModels()
	case "item":
		units = r.NumItems()
	default:
		return nil, nil, nil, model.FieldErrorf("By", "split: unknown {By} %q (want cell, model, item or benchmark)", opt.By)
	}
	nTest, nVal := count(opt.Test, units), count(opt.Val, units)
	if nTest+nVal >= units {
		return nil, nil, nil, fmt.Errorf("split: %d %ss are too few to hold out %d for validation and %d for test and still train", units, by, nVal, nTest)
	}
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x5851f42d4c957f2d))
	// part[u] is 0 train, 1 validation, 2 test for unit u.
	part := make([]uint8, units)
	perm := rng.Perm(units)
	for k, u := range perm[:nTest+nVal] {
		if k < nTest {
			part[u] = 2
		} else {
			part[u] = 1
		}
	}
	var cells [3][]int32
	for c := 0; c < r.Len(); c++ {
		u := c
		switch by {
		case "model":
			u = int(r.Model[c])
		case "item":
			u = int(r.Item[c])
		}
		cells[part[u]] = append(cells[part[u]], int32(c))
	}
	return r.Subset(cells[0]), r.Subset(cells[1]), r.Subset(cells[2]), nil
}

// count is round(frac·n), and at least 1 when frac > 0 and n > 1.
func count(frac float64, n int) int {
	k := int(math.Round(frac * float64(n)))
	if k == 0 && frac > 0 && n > 1 {
		k = 1
	}
	return k
}
