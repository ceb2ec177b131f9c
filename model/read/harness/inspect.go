package harness

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/machine"
	"github.com/jeirt/jeirt/model/read/harness/internal/jsonscan"
	"github.com/jeirt/jeirt/model/read/internal/cell"
)

// inspect_ai: a log is a .json file ({version, status, eval: {task, model,
// scorers}, plan, results, stats, samples: [...], reductions}) or a .eval
// zip (header.json with the same header, or _journal/start.json while a run
// is going, and one member samples/ID_epoch_N.json per sample). A sample
// is {id, epoch, input (a string or messages), scores: {SCORER: {value}},
// error}.

type inspectHeader struct {
	Eval struct {
		Task    string `json:"task"`
		Model   string `json:"model"`
		Scorers []struct {
			Name string `json:"name"`
		} `json:"scorers"`
	} `json:"eval"`
	Results *struct {
		Scores []struct {
			Name string `json:"name"`
		} `json:"scores"`
	} `json:"results"`
}

// inspectLog reads the samples of one log.
type inspectLog struct {
	c        *collector
	path     string
	head     inspectHeader
	m        *logModel
	scorer   string
	sub      string // the key of a scorer's value that is an object (--metric SCORER/KEY)
	log      Log
	miss     missing
	errored  int
	total    int
	category string
}

func (c *collector) newInspectLog(p string, head inspectHeader) (*inspectLog, error) {
	if head.Eval.Model == "" || head.Eval.Task == "" {
		return nil, fmt.Errorf("%s: key \"eval\": want the task and the model of the log", p)
	}
	l := &inspectLog{c: c, path: p, head: head, m: c.model(head.Eval.Model), category: head.Eval.Task}
	l.log = Log{Path: p, Tool: Inspect, Model: head.Eval.Model, Task: head.Eval.Task}
	return l, nil
}

// inspectJSON reads a .json log, streaming its samples.
func (c *collector) inspectJSON(p string) error {
	in, err := fileio.OpenInput(p)
	if err != nil {
		return err
	}
	defer in.Close()
	skipBOM(in)
	s := jsonscan.NewStream(in)
	at := "the log"
	var l *inspectLog
	var head inspectHeader
	err = s.EachKey(func(key []byte) (bool, error) {
		at = string(key)
		switch at {
		case "eval", "results":
			raw, err := s.Value(true)
			if err != nil {
				return false, err
			}
			wrapped := append(append([]byte(`{"`+at+`":`), jsonscan.NullNonFinite(raw)...), '}')
			return true, json.Unmarshal(wrapped, &head)
		case "samples":
			if l == nil {
				var err error
				if l, err = c.newInspectLog(p, head); err != nil {
					return false, err
				}
			}
			return true, s.EachElem(func(el []byte, k int) error {
				at = fmt.Sprintf("samples[%d]", k)
				return l.sample(el, k+1)
			})
		}
		_, err := s.Value(false)
		return true, err
	})
	if err != nil {
		var pe *cell.ParseError
		if errors.As(err, &pe) {
			return err
		}
		return &cell.ParseError{File: p, Msg: fmt.Sprintf("%s (byte %d): %v", at, s.Offset(), err), Err: err}
	}
	if l == nil {
		c.skip(p, "an inspect log without samples (a header-only log: run inspect with samples logged)")
		return nil
	}
	return l.done()
}

// inspectEval reads a .eval zip log.
func (c *collector) inspectEval(p string) error {
	in, err := fileio.OpenInput(p)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := zip.NewReader(&windowReader{f: in.File, ctx: c.t.Context(), path: p}, in.Size)
	if err != nil {
		return fmt.Errorf("%s: not a readable inspect .eval (zip) log: %v", p, err)
	}
	limit := memberLimit(in.Size)
	var headFile *zip.File
	var samples []*zip.File
	for _, f := range zr.File {
		switch {
		case f.Name == "header.json":
			headFile = f
		case f.Name == "_journal/start.json" && headFile == nil:
			headFile = f
		case strings.HasPrefix(f.Name, "samples/") && strings.HasSuffix(f.Name, ".json"):
			samples = append(samples, f)
		}
	}
	if headFile == nil {
		return fmt.Errorf("%s: an inspect .eval log without header.json or _journal/start.json", p)
	}
	// Every member's size is checked before any is read: a lying zip is
	// refused at once, and what is held is bounded by the log's size.
	for _, f := range append([]*zip.File{headFile}, samples...) {
		if f.UncompressedSize64 > uint64(limit) {
			return fmt.Errorf("%s!%s: the zip says it is %s uncompressed, more than %s (%d times the .eval's %s, the most jeirt reads of one member): not read", p, f.Name, machine.Bytes(int64(min(f.UncompressedSize64, 1<<62))), machine.Bytes(limit), memberFactor, machine.Bytes(in.Size))
		}
	}
	b, err := readMember(p, headFile, nil)
	if err != nil {
		return err
	}
	var head inspectHeader
	b = jsonscan.NullNonFinite(bytes.TrimPrefix(b, bom))
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s!%s: %s", p, headFile.Name, jsonError(b, err))
	}
	if len(samples) == 0 {
		c.skip(p, "an inspect log without samples")
		return nil
	}
	l, err := c.newInspectLog(p, head)
	if err != nil {
		return err
	}
	var buf []byte
	for k, f := range samples {
		if err := c.t.Err(p); err != nil {
			return err
		}
		b, err := readMember(p, f, buf)
		buf = b
		if err != nil {
			return err
		}
		if err := l.sample(b, k+1); err != nil {
			return &cell.ParseError{File: p + "!" + f.Name, Msg: err.Error(), Err: err}
		}
	}
	return l.done()
}

// windowReader reads a file at offsets through a window of 1 MiB: the
// members of a zip are read in the order they lie in the file, and each
// read of the zip reader would otherwise be a system call.
type windowReader struct {
	f    *os.File
	ctx  context.Context // a read stops when the run is cancelled
	path string
	buf  []byte
	off  int64
}

func (w *windowReader) ReadAt(p []byte, off int64) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, fmt.Errorf("reading %s: %w", w.path, err)
	}
	if off < w.off || off+int64(len(p)) > w.off+int64(len(w.buf)) {
		if len(p) > 1<<20 {
			return w.f.ReadAt(p, off)
		}
		if cap(w.buf) < 1<<20 {
			w.buf = make([]byte, 1<<20)
		}
		n, err := w.f.ReadAt(w.buf[:cap(w.buf)], off)
		w.buf, w.off = w.buf[:n], off
		if n < len(p) {
			copy(p, w.buf)
			if err == nil {
				err = io.EOF
			}
			return n, err
		}
	}
	return copy(p, w.buf[off-w.off:]), nil
}

// memberFactor bounds what a .eval log makes jeirt hold: one member at a
// time, of at most memberFactor times the size of the .eval (and at least
// 4 MiB, at most 1 GiB). Samples compress some 5 to 20 times; a zip whose
// members claim more is refused by name before anything is read.
const memberFactor = 64

// memberLimit is the most bytes one member of a .eval of size bytes is read to.
func memberLimit(size int64) int64 {
	return min(max(memberFactor*size, 4<<20), 1<<30)
}

// readMember reads one member into buf (reused). Its size was checked
// against memberLimit; a member longer than the zip says is refused.
func readMember(p string, f *zip.File, buf []byte) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s!%s: %v", p, f.Name, err)
	}
	defer rc.Close()
	n := int(f.UncompressedSize64)
	if cap(buf) < n+1 {
		buf = make([]byte, n+1)
	}
	buf = buf[:n+1]
	k, err := io.ReadFull(rc, buf)
	switch {
	case (err == io.ErrUnexpectedEOF || err == io.EOF) && k == n:
		// the whole member: one byte short of the room given
	case err == nil:
		return nil, fmt.Errorf("%s!%s: longer than the zip says", p, f.Name)
	default:
		return nil, fmt.Errorf("%s!%s: %v", p, f.Name, err)
	}
	return buf[:n], nil
}

// chooseScorer picks the scorer of the log on its first sample: the first
// of --metric (SCORER or SCORER/KEY) it has, else its first scorer.
func (l *inspectLog) chooseScorer(scores []byte) error {
	var have []string
	for _, s := range l.head.Eval.Scorers {
		addOnce(&have, s.Name)
	}
	if l.head.Results != nil {
		for _, s := range l.head.Results.Scores {
			addOnce(&have, s.Name)
		}
	}
	if len(scores) > 0 && scores[0] == '{' {
		jsonscan.EachField(scores, func(k, _ []byte) bool { addOnce(&have, string(k)); return true })
	}
	if len(have) == 0 {
		return fmt.Errorf("no scorer named in the log")
	}
	if len(l.c.opt.Metric) == 0 {
		l.scorer = have[0]
		return nil
	}
	for _, want := range l.c.opt.Metric {
		name, sub, _ := strings.Cut(want, "/")
		if slices.Contains(have, name) {
			l.scorer, l.sub = name, sub
			return nil
		}
	}
	return fmt.Errorf("the log has none of --metric %s (its scorers: %s)", strings.Join(l.c.opt.Metric, ","), strings.Join(have, ", "))
}

// sample reads one sample.
func (l *inspectLog) sample(b []byte, k int) error {
	var id, epoch, input, scores, errv []byte
	if err := jsonscan.EachField(b, func(key, v []byte) bool {
		switch string(key) {
		case "id":
			id = v
		case "epoch":
			epoch = v
		case "input":
			input = v
		case "scores":
			scores = v
		case "error":
			errv = v
		}
		return true
	}); err != nil {
		return err
	}
	sid := jsonscan.ID(id)
	if sid == "" {
		return fmt.Errorf("key \"id\": want a string or integer sample id")
	}
	if l.scorer == "" {
		if err := l.chooseScorer(scores); err != nil {
			return err
		}
		l.log.Metric = l.scorer
		if l.sub != "" {
			l.log.Metric += "/" + l.sub
		}
	}
	l.total++
	var val []byte
	if len(scores) > 0 && scores[0] == '{' {
		sc, err := jsonscan.Field(scores, l.scorer)
		if err != nil {
			return err
		}
		if sc != nil {
			if val, err = jsonscan.Field(sc, "value"); err != nil {
				return err
			}
		}
	}
	if val == nil || string(val) == "null" {
		if len(errv) > 0 && string(errv) != "null" {
			l.errored++
			l.log.Passed++
			l.log.Why = "samples that errored, unscored"
			return nil
		}
		e := sid
		if ep := jsonscan.ID(epoch); ep != "" && ep != "1" {
			e += " (epoch " + ep + ")"
		}
		l.miss.add(e)
		return nil
	}
	x, err := l.value(val)
	if err != nil {
		return fmt.Errorf("sample %s: scorer %s: %v", sid, l.log.Metric, err)
	}
	i, need := l.c.item(Inspect, l.head.Eval.Task, sid, l.category)
	if need {
		l.c.setText(i, inspectText(input))
	}
	l.c.score(l.m, i, x, k)
	l.log.Samples++
	return nil
}

// value reads a scorer's value: C, I, N (no answer: incorrect), P (partial,
// 0.5 with --graded), yes/no, true/false or a number in [0, 1]; an object of
// values needs --metric SCORER/KEY.
func (l *inspectLog) value(v []byte) (float64, error) {
	if len(v) > 0 && v[0] == '{' {
		if l.sub == "" {
			var keys []string
			jsonscan.EachField(v, func(k, _ []byte) bool { keys = append(keys, string(k)); return true })
			return 0, fmt.Errorf("the value is an object of %s: choose one with --metric %s/KEY", strings.Join(keys, ", "), l.scorer)
		}
		sv, err := jsonscan.Field(v, l.sub)
		if err != nil {
			return 0, err
		}
		if sv == nil {
			return 0, fmt.Errorf("the value has no key %q", l.sub)
		}
		v = sv
	}
	if s, ok := jsonscan.Str(v); ok {
		switch strings.ToLower(s) {
		case "c", "yes", "true", "correct":
			return 1, nil
		case "i", "n", "no", "false", "incorrect":
			return 0, nil
		case "p", "partial":
			if !l.c.opt.Graded {
				return 0, fmt.Errorf("P (partial credit): read it as a score of 0.5 with --graded")
			}
			return 0.5, nil
		}
		return 0, fmt.Errorf("%q is not a score (want C, I, P, N, a number in [0, 1] or a boolean)", s)
	}
	x, ok := jsonscan.Number(v)
	if why := notNumber(v); !ok && why != "" {
		return 0, errors.New(why)
	}
	if !ok {
		return 0, fmt.Errorf("%s is not a score", clipRaw(v))
	}
	return x, checkScore(x, l.log.Metric)
}

// done checks the log's samples and records it.
func (l *inspectLog) done() error {
	if err := l.miss.err(l.path, l.log.Task, l.log.Metric, "sample", l.total); err != nil {
		return err
	}
	if l.log.Samples == 0 {
		why := "an inspect log with no scored samples"
		if l.errored > 0 {
			why = fmt.Sprintf("an inspect log whose %d samples errored, unscored", l.errored)
		}
		l.c.skip(l.path, why)
		return nil
	}
	l.c.sum.Logs = append(l.c.sum.Logs, l.log)
	return nil
}

// inspectText is a sample's input: the string, or the text of its user
// messages (a content string, or the text parts of a content list), joined
// by blank lines.
func inspectText(input []byte) string {
	if s, ok := jsonscan.Str(input); ok {
		return s
	}
	var parts []string
	jsonscan.Elems(input, func(msg []byte) (bool, error) {
		role, _ := jsonscan.Field(msg, "role")
		if r, _ := jsonscan.Str(role); r != "user" {
			return true, nil
		}
		content, _ := jsonscan.Field(msg, "content")
		if s, ok := jsonscan.Str(content); ok {
			parts = append(parts, s)
			return true, nil
		}
		jsonscan.Elems(content, func(part []byte) (bool, error) {
			typ, _ := jsonscan.Field(part, "type")
			if t, _ := jsonscan.Str(typ); t == "text" {
				text, _ := jsonscan.Field(part, "text")
				if s, ok := jsonscan.Str(text); ok {
					parts = append(parts, s)
				}
			}
			return true, nil
		})
		return true, nil
	})
	return strings.Join(parts, "\n\n")
}
