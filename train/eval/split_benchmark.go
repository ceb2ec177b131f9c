package eval

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// SplitByBenchmark holds out whole benchmarks: every cell of an item whose
// group (r.ItemGroup) is in opt.Hold goes to test (or, with Hold empty,
// round(opt.Test·G) of the G groups drawn with opt.Seed). Validation is
// round(opt.Val·n) whole items drawn from the remaining benchmarks, so early
// stopping measures new questions of known benchmarks, never the held-out
// one. Items without a group stay in training. Like Split, all three keep
// r's model and item lists.
func SplitByBenchmark(r *model.Responses, opt SplitOptions) (trainR, valR, testR *model.Responses, err error) {
	if r.ItemGroup == nil {
		return nil, nil, nil, model.FieldErrorf("Items", "split by benchmark: the items have no groups; give an item file with a category or benchmark column ({Items})")
	}
	groups := BenchmarkNames(r)
	if len(groups) < 2 {
		return nil, nil, nil, fmt.Errorf("split by benchmark: need at least two benchmarks, found %d (%s)", len(groups), strings.Join(groups, ", "))
	}
	rng := rand.New(rand.NewPCG(uint64(opt.Seed), 0x5851f42d4c957f2d))
	held := map[string]bool{}
	if len(opt.Hold) > 0 {
		known := map[string]bool{}
		for _, g := range groups {
			known[g] = true
		}
		for _, h := range opt.Hold {
			if !known[h] {
				return nil, nil, nil, model.FieldErrorf("Hold", "split by benchmark: {Hold} %q is not a benchmark of the data (have %s)", h, strings.Join(groups, ", "))
			}
			held[h] = true
		}
	} else {
		n := count(opt.Test, len(groups))
		for _, k := range rng.Perm(len(groups))[:n] {
			held[groups[k]] = true
		}
	}
	if len(held) == 0 || len(held) >= len(groups) {
		return nil, nil, nil, fmt.Errorf("split by benchmark: holding out %d of %d benchmarks leaves nothing to test or to train on", len(held), len(groups))
	}
	// part[j]: 0 train, 1 validation, 2 test.
	part := make([]uint8, r.NumItems())
	var rest []int
	for j, g := range r.ItemGroup {
		if held[g] {
			part[j] = 2
		} else {
			rest = append(rest, j)
		}
	}
	nVal := count(opt.Val, len(rest))
	if nVal >= len(rest) {
		return nil, nil, nil, fmt.Errorf("split by benchmark: %d training items are too few to hold out %d for validation", len(rest), nVal)
	}
	for _, k := range rng.Perm(len(rest))[:nVal] {
		part[rest[k]] = 1
	}
	var cells [3][]int32
	for c, j := range r.Item {
		cells[part[j]] = append(cells[part[j]], int32(c))
	}
	return r.Subset(cells[0]), r.Subset(cells[1]), r.Subset(cells[2]), nil
}

// BenchmarkNames lists the item groups of r (its benchmarks), sorted; items
// without a group are left out.
func BenchmarkNames(r *model.Responses) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range r.ItemGroup {
		if g != "" && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// HeldBenchmarks lists the benchmarks that have cells in testR.
func HeldBenchmarks(testR *model.Responses) []string {
	seen := map[string]bool{}
	var out []string
	if testR.ItemGroup == nil {
		return nil
	}
	for _, j := range testR.Item {
		if g := testR.ItemGroup[j]; g != "" && !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}
