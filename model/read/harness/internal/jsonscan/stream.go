package jsonscan

import (
	"bytes"
	"fmt"
	"io"
)

// Stream walks a JSON document read from r a value at a time, holding only
// the value asked for (an array element) and passing over the others
// without holding them: what the big documents (scenario_state.json,
// per_instance_stats.json, inspect's .json logs) need. encoding/json's
// Decoder does the same, but scans each value twice (to find its end,
// then to decode it) and byte by byte; this finds the ends of strings with
// a byte search, several times faster.
type Stream struct {
	r        io.Reader
	buf      []byte
	pos, end int
	off      int64 // offset in the file of buf[0]
	eof      bool
	err      error
}

// NewStream returns a stream of the JSON document r.
func NewStream(r io.Reader) *Stream { return newStreamSize(r, 256<<10) }

func newStreamSize(r io.Reader, n int) *Stream { return &Stream{r: r, buf: make([]byte, n)} }

// Offset is the file offset of the next byte.
func (s *Stream) Offset() int64 { return s.off + int64(s.pos) }

// fill moves buf[keep:end] to the start of buf, reads more after it, and
// returns how far the kept bytes moved; false when the file has ended.
func (s *Stream) fill(keep int) (int, bool) {
	if s.eof {
		return 0, false
	}
	n := copy(s.buf, s.buf[keep:s.end])
	s.off += int64(keep)
	s.pos -= keep
	s.end = n
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	k, err := io.ReadAtLeast(s.r, s.buf[s.end:], 1)
	s.end += k
	if err != nil {
		s.eof = true
		if err != io.EOF && err != io.ErrUnexpectedEOF {
			s.err = err
		}
	}
	return keep, k > 0
}

// space passes over white space and returns the next byte, 0 at the end.
func (s *Stream) space() byte {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c
			}
		}
		if _, ok := s.fill(s.pos); !ok {
			return 0
		}
	}
}

// expect consumes the byte c (after space).
func (s *Stream) expect(c byte) error {
	if got := s.space(); got != c {
		if got == 0 {
			return s.eofErr()
		}
		return fmt.Errorf("%w: want %q, found %q", ErrSyntax, c, got)
	}
	s.pos++
	return nil
}

func (s *Stream) eofErr() error {
	if s.err != nil {
		return s.err
	}
	return fmt.Errorf("%w: the file ends inside a value", ErrSyntax)
}

// Value returns the next value's bytes (valid until the next call) when
// hold, else passes over it holding none of it and returns nil.
func (s *Stream) Value(hold bool) ([]byte, error) {
	if s.space() == 0 {
		return nil, s.eofErr()
	}
	start, i := s.pos, s.pos
	depth := 0
	inStr, scalar := false, false
	for {
		if i >= s.end {
			// An escape's second byte may be yet to be read (i > end).
			keep := min(i, s.end)
			if hold {
				keep = start
			}
			s.pos = keep
			shift, ok := s.fill(keep)
			start -= shift
			i -= shift
			if !ok {
				if scalar && depth == 0 {
					return s.done(start, i, hold), nil
				}
				return nil, s.eofErr()
			}
			continue
		}
		if inStr {
			b := s.buf[i:s.end]
			q := bytes.IndexByte(b, '"')
			lim := q
			if q < 0 {
				lim = len(b)
			}
			if e := bytes.IndexByte(b[:lim], '\\'); e >= 0 {
				i += e + 2
				continue
			}
			if q < 0 {
				i = s.end
				continue
			}
			i += q + 1
			inStr = false
			if depth == 0 {
				return s.done(start, i, hold), nil
			}
			continue
		}
		c := s.buf[i]
		if scalar {
			switch c {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.done(start, i, hold), nil
			}
			i++
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("%w: unexpected %q", ErrSyntax, c)
			}
			if depth == 0 {
				return s.done(start, i+1, hold), nil
			}
		default:
			if depth == 0 {
				scalar = true
			}
		}
		i++
	}
}

func (s *Stream) done(start, end int, hold bool) []byte {
	s.pos = end
	if !hold {
		return nil
	}
	return s.buf[start:end]
}

// Enter moves into the top-level object to the value of key, passing
// over the values before it; false when the object has no such key.
func (s *Stream) Enter(key string) (bool, error) {
	found := false
	err := s.EachKey(func(k []byte) (bool, error) {
		if string(k) == key {
			found = true
			return false, nil
		}
		_, err := s.Value(false)
		return true, err
	})
	return found, err
}

// EachKey calls fn at each key of the object that starts next, positioned
// at its value, which fn must consume unless it returns false (stop).
func (s *Stream) EachKey(fn func(key []byte) (bool, error)) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.space() == '}' {
		s.pos++
		return nil
	}
	for {
		k, err := s.Value(true)
		if err != nil {
			return err
		}
		if len(k) < 2 || k[0] != '"' {
			return fmt.Errorf("%w: want a key", ErrSyntax)
		}
		key := append([]byte(nil), k[1:len(k)-1]...)
		if err := s.expect(':'); err != nil {
			return err
		}
		more, err := fn(key)
		if err != nil || !more {
			return err
		}
		switch s.space() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		case 0:
			return s.eofErr()
		default:
			return fmt.Errorf("%w: want ',' or '}' after a value", ErrSyntax)
		}
	}
}

// EachElem calls fn with each element of the array that starts next and
// its 0-based index.
func (s *Stream) EachElem(fn func(el []byte, k int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.space() == ']' {
		s.pos++
		return nil
	}
	for k := 0; ; k++ {
		el, err := s.Value(true)
		if err != nil {
			return err
		}
		if err := fn(el, k); err != nil {
			return err
		}
		switch s.space() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		case 0:
			return s.eofErr()
		default:
			return fmt.Errorf("%w: want ',' or ']' after an element", ErrSyntax)
		}
	}
}
