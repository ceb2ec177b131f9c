package read

import (
	"io"
	"strings"

	"github.com/jeirt/jeirt/model"
)

// readLong reads one row per (model, item) cell: model, item and label
// columns found by name, with optional text and category columns.
func readLong(s *csvScanner, cells *cellSink, rep *Report) (*model.Responses, error) {
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
	var lp labelParser
	for {
		f, err := s.nextRow(rep, len(h))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(f[c.model]) == 0 {
			return nil, s.errorf(s.start, h[c.model], "empty model name")
		}
		if len(f[c.item]) == 0 {
			return nil, s.errorf(s.start, h[c.item], "empty item id")
		}
		m := models.id(f[c.model])
		i := items.id(f[c.item])
		if c.text >= 0 {
			text = setFirst(text, int(i), f[c.text])
		}
		if c.group >= 0 {
			group = setFirst(group, int(i), f[c.group])
		}
		y, err := lp.label(s.file, s.start, h[c.label], f[c.label])
		if err != nil {
			return nil, err
		}
		if y == labelMissing {
			rep.Blank++
			continue
		}
		cells.add(m, i, y, s.start)
	}
	if rep.Rows == 0 {
		return nil, s.errorf(0, "", "no data rows after the header")
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
