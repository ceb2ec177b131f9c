package read

import (
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// readLong reads one row per (model, item) cell: model, item and label
// columns found by name (or successes and trials columns), with optional
// text and category columns.
func readLong(s *csvScanner, cells *cell.Sink, lp *cell.Labels, rep *Report) (*model.Responses, error) {
	h := s.header
	c, ok := cell.FindLongColumns(h)
	if s.layout.columns != nil {
		var err error
		if c, err = s.layout.apply(s.file, h, c); err != nil {
			return nil, err
		}
		ok = c.Model >= 0 && c.Item >= 0 && c.Label >= 0
	}
	if !ok {
		switch {
		case c.Model < 0:
			return nil, s.errorf(1, "", "no model column (want one of %s); header is %s", strings.Join(cell.ModelNames, ", "), cell.ClipJoin(h))
		case c.Item < 0:
			return nil, s.errorf(1, "", "no item column (want one of %s); header is %s", strings.Join(cell.ItemNames, ", "), cell.ClipJoin(h))
		default:
			return nil, s.errorf(1, "", "no label column (want one of %s); header is %s", strings.Join(cell.LabelNames, ", "), cell.ClipJoin(h))
		}
	}
	if c.Graded {
		lp.Graded = true // a graded_score column: jeirt wrote the file so
	}
	models, items := cell.NewNames(), cell.NewNames()
	var text, group []string
	if err := s.eachRow(rep, func(f [][]byte) error {
		if len(f[c.Model]) == 0 {
			return s.errorf(s.start, h[c.Model], "empty model name")
		}
		if len(f[c.Item]) == 0 {
			return s.errorf(s.start, h[c.Item], "empty item id")
		}
		m := models.ID(f[c.Model])
		i := items.ID(f[c.Item])
		if c.Text >= 0 {
			text = cell.SetFirst(text, int(i), f[c.Text])
		}
		if c.Group >= 0 {
			group = cell.SetFirst(group, int(i), f[c.Group])
		}
		if c.Trials >= 0 {
			k, n, msg, col := cell.ParseCounts(f[c.Label], f[c.Trials], lp.Graded)
			switch {
			case msg != "":
				return s.errorf(s.start, h[[]int{c.Label, c.Trials}[col]], "%s", msg)
			case n == 0:
				cells.Blank++
			default:
				cells.AddCounts(m, i, k, n, s.start)
			}
			return nil
		}
		y, err := lp.Label(s.file, s.start, h[c.Label], f[c.Label])
		if err != nil {
			return err
		}
		cells.AddLabel(m, i, y, lp, s.start)
		return nil
	}); err != nil {
		return nil, err
	}
	r := &model.Responses{Models: models.List, Items: items.List}
	if c.Text >= 0 {
		r.ItemText = cell.PadTo(text, len(r.Items))
	}
	if c.Group >= 0 {
		r.ItemGroup = cell.PadTo(group, len(r.Items))
	}
	return r, nil
}
