package read

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// readLong reads one row per (model, item) cell: model, item and label
// columns found by name (or successes and trials columns), with optional
// text and category columns.
func readLong(s *csvScanner, cells *cellSink, lp *labelParser, rep *Report) (*model.Responses, error) {
	h := s.header
	c, ok := findLongColumns(h)
	if !ok {
		switch {
		case c.model < 0:
			return nil, s.errorf(1, "", "no model column (want one of %s); header is %s", strings.Join(modelNames, ", "), clipJoin(h))
		case c.item < 0:
			return nil, s.errorf(1, "", "no item column (want one of %s); header is %s", strings.Join(itemNames, ", "), clipJoin(h))
		default:
			return nil, s.errorf(1, "", "no label column (want one of %s); header is %s", strings.Join(labelNames, ", "), clipJoin(h))
		}
	}
	models, items := newNameTable(), newNameTable()
	var text, group []string
	if err := s.eachRow(rep, func(f [][]byte) error {
		if len(f[c.model]) == 0 {
			return s.errorf(s.start, h[c.model], "empty model name")
		}
		if len(f[c.item]) == 0 {
			return s.errorf(s.start, h[c.item], "empty item id")
		}
		m := models.id(f[c.model])
		i := items.id(f[c.item])
		if c.text >= 0 {
			text = setFirst(text, int(i), f[c.text])
		}
		if c.group >= 0 {
			group = setFirst(group, int(i), f[c.group])
		}
		if c.trials >= 0 {
			k, n, msg, col := parseCounts(f[c.label], f[c.trials], lp.graded)
			switch {
			case msg != "":
				return s.errorf(s.start, h[[]int{c.label, c.trials}[col]], "%s", msg)
			case n == 0:
				rep.Blank++
			default:
				cells.addCounts(m, i, k, n, s.start)
			}
			return nil
		}
		y, err := lp.label(s.file, s.start, h[c.label], f[c.label])
		if err != nil {
			return err
		}
		cells.addLabel(m, i, y, lp, s.start, rep)
		return nil
	}); err != nil {
		return nil, err
	}
	r := &model.Responses{Models: models.list, Items: items.list}
	if c.text >= 0 {
		r.ItemText = padTo(text, len(r.Items))
	}
	if c.group >= 0 {
		r.ItemGroup = padTo(group, len(r.Items))
	}
	return r, nil
}

// parseCounts reads a cell of k successes (kb) in n trials (nb): n a whole
// number, 0 ≤ k ≤ n, k whole unless graded. A blank or NA trials value, or
// 0 trials with 0 (or blank) successes, is a missing cell (n = 0). A
// problem comes back as a message and the field at fault (0: successes, 1:
// trials).
func parseCounts(kb, nb []byte, graded bool) (k float64, n int32, msg string, col int) {
	kb, nb = bytes.TrimSpace(kb), bytes.TrimSpace(nb)
	if isMissingText(nb) {
		if !isMissingText(kb) {
			return 0, 0, fmt.Sprintf("%q successes with no trials", model.Clip(string(kb))), 1
		}
		return 0, 0, "", 0
	}
	t, err := strconv.ParseInt(string(nb), 10, 32)
	if err != nil || t < 0 {
		if v, ok := parseFloatLabel(nb); ok && v == math.Trunc(v) && v >= 0 && v < 1<<31 {
			t, err = int64(v), nil // 5.0
		} else {
			return 0, 0, fmt.Sprintf("%q is not a number of trials (a whole number, at least 0)", model.Clip(string(nb))), 1
		}
	}
	if isMissingText(kb) {
		if t == 0 {
			return 0, 0, "", 0
		}
		return 0, 0, fmt.Sprintf("no successes given for %d trials", t), 0
	}
	k, ok := parseFloatLabel(kb)
	switch {
	case !ok || k < 0:
		return 0, 0, fmt.Sprintf("%q is not a number of successes (at least 0)", model.Clip(string(kb))), 0
	case k > float64(t):
		return 0, 0, fmt.Sprintf("%s successes in %d trials: more successes than trials", model.Clip(string(kb)), t), 0
	case k != math.Trunc(k) && !graded:
		return 0, 0, fmt.Sprintf("%q is a fractional number of successes (use --graded for graded scores)", model.Clip(string(kb))), 0
	}
	return k, int32(t), "", 0
}

// isMissingText is a blank, NA or NaN field.
func isMissingText(b []byte) bool {
	switch strings.ToLower(string(b)) {
	case "", "na", "nan", "n/a", "null":
		return true
	}
	return false
}

// setFirst records v for item i unless the item already has a non-empty value.
func setFirst(list []string, i int, v []byte) []string {
	for len(list) <= i {
		list = append(list, "")
	}
	if list[i] == "" && len(v) > 0 {
		list[i] = string(v)
	}
	return list
}

func padTo(list []string, n int) []string {
	for len(list) < n {
		list = append(list, "")
	}
	return list
}
