package read

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// ColumnRoles are the roles Options.Columns may name.
var ColumnRoles = []string{"model", "item", "label", "successes", "trials", "text", "group"}

// textLayout is how a text file's fields are separated and which of its
// columns are which, beyond what the header's names say (Options.Delimiter,
// Options.Columns).
type textLayout struct {
	delim   byte              // 0: by the file's name and header
	columns map[string]string // role -> header name; nil: by name
}

// parseLayout checks and parses the delimiter and column options.
func parseLayout(opt Options) (textLayout, error) {
	var l textLayout
	switch opt.Delimiter {
	case "":
	case ",", ";", "|":
		l.delim = opt.Delimiter[0]
	case "tab", "\t", `\t`:
		l.delim = '\t'
	default:
		return l, model.FieldErrorf("Delimiter", "{Delimiter} %q: want one of , ; | tab", limits.Clip(opt.Delimiter))
	}
	if strings.TrimSpace(opt.Columns) == "" {
		return l, nil
	}
	l.columns = map[string]string{}
	for _, part := range strings.Split(opt.Columns, ",") {
		role, name, ok := strings.Cut(part, "=")
		role, name = strings.ToLower(strings.TrimSpace(role)), strings.TrimSpace(name)
		switch {
		case !ok || name == "":
			return l, model.FieldErrorf("Columns", "{Columns} %q: want ROLE=COLUMN pairs separated by commas, e.g. model=Model Name,item=Question,label=Score", limits.Clip(part))
		case !slices.Contains(ColumnRoles, role):
			return l, model.FieldErrorf("Columns", "{Columns}: unknown role %q (want %s)", limits.Clip(role), strings.Join(ColumnRoles, ", "))
		case l.columns[role] != "":
			return l, model.FieldErrorf("Columns", "{Columns}: %s is given twice", role)
		}
		l.columns[role] = name
	}
	if l.columns["label"] != "" && l.columns["successes"] != "" {
		return l, model.FieldErrorf("Columns", "{Columns}: give label (0/1 cells) or successes with trials, not both")
	}
	return l, nil
}

// key is what the layout adds to the response cache's key ("" for the
// default, so caches written before the options stay valid).
func (l textLayout) key() string {
	if l.delim == 0 && l.columns == nil {
		return ""
	}
	s := fmt.Sprintf("\x00delim=%q", l.delim)
	for _, role := range ColumnRoles {
		if n, ok := l.columns[role]; ok {
			s += "\x00" + role + "=" + n
		}
	}
	return s
}

// apply sets the columns the layout names in c (the columns found in header
// by name), or says which named column the header lacks.
func (l textLayout) apply(file string, header []string, c cell.LongColumns) (cell.LongColumns, error) {
	for _, role := range ColumnRoles {
		name, ok := l.columns[role]
		if !ok {
			continue
		}
		k := slices.Index(header, name)
		if k < 0 {
			for i, h := range header {
				if strings.EqualFold(h, name) {
					k = i
					break
				}
			}
		}
		if k < 0 {
			fe := model.FieldErrorf("Columns", "{Columns} %s=%s: the header has no column %q; header is %s", role, limits.Clip(name), limits.Clip(name), cell.ClipJoin(header))
			return c, &ParseError{File: file, Line: 1, Err: fe, Msg: fe.Error()}
		}
		switch role {
		case "model":
			c.Model = k
		case "item":
			c.Item = k
		case "label", "successes":
			c.Label, c.Graded = k, isGradedColumn(name)
		case "trials":
			c.Trials = k
		case "text":
			c.Text = k
		case "group":
			c.Group = k
		}
	}
	if l.columns["successes"] != "" && l.columns["trials"] == "" && c.Trials < 0 {
		fe := model.FieldErrorf("Columns", "{Columns} names successes but no trials column: add trials=COLUMN")
		return c, &ParseError{File: file, Line: 1, Err: fe, Msg: fe.Error()}
	}
	return c, nil
}

// isGradedColumn says whether a column named so holds graded scores
// (cell.GradedNames, cell.GradedSuccessNames).
func isGradedColumn(name string) bool {
	return cell.FindColumn([]string{name}, cell.GradedNames) >= 0 || cell.FindColumn([]string{name}, cell.GradedSuccessNames) >= 0
}
