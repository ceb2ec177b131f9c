package model

import (
	"fmt"
	"sort"
)

// JoinBenchmarks puts several benchmarks' responses into one matrix, for a
// joint fit: models are matched by name (a model missing from a benchmark
// simply has no cells there), items are kept per benchmark in the given
// order, and each item's group (ItemGroup) is its benchmark's name. An item
// id that occurs in more than one benchmark is written "NAME/ID" in every
// benchmark that has it, so ids stay unique; other ids are kept as they are.
// Items and models without an observed cell (the blank rows a split file
// lists) are left out. Models are listed in order of first appearance. Item
// texts are kept when any benchmark has them.
func JoinBenchmarks(names []string, rs []*Responses) (*Responses, error) {
	if len(names) != len(rs) {
		return nil, fmt.Errorf("join: %d names for %d benchmarks", len(names), len(rs))
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("join: no benchmarks")
	}
	seen := map[string]bool{}
	count := map[string]int{}
	for k, r := range rs {
		if seen[names[k]] {
			return nil, fmt.Errorf("join: benchmark name %q given twice", names[k])
		}
		seen[names[k]] = true
		for j, n := range observedPerItem(r) {
			if n > 0 {
				count[r.Items[j]]++
			}
		}
	}
	out := &Responses{}
	modelIdx := map[string]int32{}
	hasText := false
	for _, r := range rs {
		hasText = hasText || r.ItemText != nil
	}
	total := 0
	for _, r := range rs {
		total += r.Len()
	}
	out.Model, out.Item, out.Label = make([]int32, 0, total), make([]int32, 0, total), make([]uint8, 0, total)
	for k, r := range rs {
		mmap := make([]int32, r.NumModels())
		for i := range mmap {
			mmap[i] = -1
		}
		for _, i := range r.Model {
			if mmap[i] >= 0 {
				continue
			}
			m := r.Models[i]
			id, ok := modelIdx[m]
			if !ok {
				id = int32(len(out.Models))
				modelIdx[m] = id
				out.Models = append(out.Models, m)
			}
			mmap[i] = id
		}
		obs := observedPerItem(r)
		imap := make([]int32, r.NumItems())
		for j, id := range r.Items {
			imap[j] = -1
			if obs[j] == 0 {
				continue
			}
			imap[j] = int32(len(out.Items))
			if count[id] > 1 {
				id = names[k] + "/" + id
			}
			out.Items = append(out.Items, id)
			out.ItemGroup = append(out.ItemGroup, names[k])
			if hasText {
				t := ""
				if r.ItemText != nil {
					t = r.ItemText[j]
				}
				out.ItemText = append(out.ItemText, t)
			}
		}
		for c := range r.Label {
			out.AppendFrom(mmap[r.Model[c]], imap[r.Item[c]], r, c)
		}
	}
	// A prefixed id could still meet an unprefixed one ("a/x" and a/"x").
	ids := append([]string(nil), out.Items...)
	sort.Strings(ids)
	for k := 1; k < len(ids); k++ {
		if ids[k] == ids[k-1] {
			return nil, fmt.Errorf("join: item id %q occurs twice after prefixing; rename a benchmark", ids[k])
		}
	}
	out.SortCells()
	return out, nil
}

// observedPerItem counts the cells of each item of r.
func observedPerItem(r *Responses) []int {
	n := make([]int, r.NumItems())
	for _, j := range r.Item {
		n[j]++
	}
	return n
}
