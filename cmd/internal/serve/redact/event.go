package redact

import (
	"bytes"
	"strings"
)

// Event is one server-sent event as a client may be given it: lines are
// the event's lines, each with its line end (the blank line that ends it
// included). Every line passes Exact; and since a client joins the values
// of an event's data: lines into one text, a configured secret split across
// them is masked too: such an event's data goes as one data: line, its
// values joined (the line breaks between them dropped, which JSON does not
// need) and masked. An event whose secrets all stand within a line passes
// line by line, its lines kept.
func (m *Masker) Event(lines [][]byte) []byte {
	var joined strings.Builder
	data := 0
	for _, l := range lines {
		if v, ok := dataValue(l); ok {
			joined.WriteString(m.Exact(v))
			data++
		}
	}
	j := joined.String()
	split := data > 1 && m.Exact(j) != j
	var out bytes.Buffer
	for _, l := range lines {
		if _, ok := dataValue(l); ok && split {
			if data > 0 {
				out.WriteString("data: " + m.Exact(j) + "\n")
				data = 0
			}
			continue
		}
		out.WriteString(m.Exact(string(l)))
	}
	return out.Bytes()
}

// dataValue is the value of a data: line (its one optional space after the
// colon and its line end dropped).
func dataValue(line []byte) (string, bool) {
	v, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if !ok {
		return "", false
	}
	return string(bytes.TrimPrefix(v, []byte(" "))), true
}
