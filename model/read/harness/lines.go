package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/limits"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// eachLine calls fn with each non-blank line of the JSON lines file path
// (its bytes valid until the next call) and its 1-based number. A long
// line is gathered in one buffer, reused, up to limits.MaxLineBytes.
func eachLine(path string, fn func(line []byte, n int) error) error {
	in, err := fileio.OpenInput(path)
	if err != nil {
		return err
	}
	defer in.Close()
	br := in.Reader
	var long []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
				if len(long) > limits.MaxLineBytes {
					return &cell.ParseError{File: path, Line: n, Msg: fmt.Sprintf("a line longer than %s", machine.Bytes(limits.MaxLineBytes))}
				}
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return &cell.ParseError{File: path, Line: n, Msg: err.Error(), Err: err}
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if n == 1 {
				t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
			}
			if ferr := fn(t, n); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// lineError is a broken or wrong line of a JSON lines file.
func lineError(path string, line int, key, format string, a ...any) error {
	return &cell.ParseError{File: path, Line: line, Column: key, Key: key != "", Msg: fmt.Sprintf(format, a...)}
}

// missing gathers the samples a task's metric is missing from, to name
// them in one error.
type missing struct {
	ids []string
	n   int
}

func (m *missing) add(id string) {
	m.n++
	if len(m.ids) < 5 {
		m.ids = append(m.ids, id)
	}
}

// err names the samples of task in file that lack metric, nil when none do.
func (m *missing) err(file, task, metric, what string, total int) error {
	if m.n == 0 {
		return nil
	}
	more := ""
	if m.n > len(m.ids) {
		more = fmt.Sprintf(", … (%d more)", m.n-len(m.ids))
	}
	return fmt.Errorf("%s: task %s: metric %q is missing in %d of %d samples (%s %s%s); choose a metric every sample has with --metric, or remove those samples",
		file, task, metric, m.n, total, what, joinIDs(m.ids), more)
}

func joinIDs(ids []string) string {
	var b bytes.Buffer
	for k, id := range ids {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(limits.Clip(id))
	}
	return b.String()
}
