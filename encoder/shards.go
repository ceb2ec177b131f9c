package encoder

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/read"
)

// MergeShards joins the outputs of encode --shard i/n, given in order 0..n-1
// (names are their files, for errors): row k of the result is row k/n of shard
// k mod n, the order of the original input. With order (the input's ids, read
// from orderName), rows follow it instead and every id must be present. An id
// found in two shards is an error.
func MergeShards(shards []*Vectors, names []string, order []string, orderName string) (*Vectors, error) {
	total := 0
	for i, v := range shards {
		if i > 0 && v.Dim != shards[0].Dim {
			return nil, fmt.Errorf("encode merge: %s has dimension %d, %s has %d", names[i], v.Dim, names[0], shards[0].Dim)
		}
		total += len(v.IDs)
	}
	out := &Vectors{Dim: shards[0].Dim}
	where := make(map[string]string, total)
	n := len(shards)
	for k := 0; k < total; k++ {
		s, r := k%n, k/n
		if r >= len(shards[s].IDs) {
			return nil, fmt.Errorf("encode merge: %s has %d rows; shards of one input differ by at most one row and shrink from first to last (give them in order 0..%d)", names[s], len(shards[s].IDs), n-1)
		}
		id := shards[s].IDs[r]
		if prev, ok := where[id]; ok {
			return nil, fmt.Errorf("encode merge: item %q is in both %s and %s", id, prev, names[s])
		}
		where[id] = names[s]
		out.IDs, out.Rows = append(out.IDs, id), append(out.Rows, shards[s].Rows[r])
	}
	if order == nil {
		return out, nil
	}
	index := make(map[string]int, len(out.IDs))
	for i, id := range out.IDs {
		index[id] = i
	}
	ordered := &Vectors{Dim: out.Dim}
	for _, id := range order {
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("encode merge: item %q of %s is in no shard", id, orderName)
		}
		ordered.IDs, ordered.Rows = append(ordered.IDs, id), append(ordered.Rows, out.Rows[i])
	}
	return ordered, nil
}

// ReadTexts reads an item-text file (read.Items: .csv, .tsv, .jsonl or
// .parquet, gzip allowed) or, for any other extension, one text per line
// with the line number as id.
func ReadTexts(path string) (ids, texts []string, err error) {
	lower := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".tsv") || strings.HasSuffix(lower, ".jsonl") || strings.HasSuffix(lower, ".parquet") {
		t, err := read.Items(path)
		if err != nil {
			return nil, nil, err
		}
		return t.IDs, t.Text, nil
	}
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		ids = append(ids, strconv.Itoa(line))
		texts = append(texts, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("%s: no texts", path)
	}
	return ids, texts, nil
}
