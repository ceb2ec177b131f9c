package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
)

// The stream gives the elements of a document's array as encoding/json
// does, through a buffer of a few bytes read a byte at a time (every
// refill boundary: inside strings, escapes, numbers), and passes over the
// values before the key.
func TestStreamAgreesWithEncodingJSON(t *testing.T) {
	doc := `{"skip": {"a": [1, "x\"]}", {"b": "\\"}], "n": -1.5e3},
	  "s": "\u00e9\"", "list": [ {"id": 1, "t": "q\"1\\"}, 42 , "str", [true, null], {"deep": {"k": "]}"}} ], "after": 0}`
	var want struct{ List []json.RawMessage }
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 2, 3, 7, 64, 1 << 10} {
		s := newStreamSize(iotest.OneByteReader(strings.NewReader(doc)), size)
		if ok, err := s.Enter("list"); !ok || err != nil {
			t.Fatalf("size %d: %v %v", size, ok, err)
		}
		var got [][]byte
		if err := s.EachElem(func(el []byte, k int) error {
			got = append(got, append([]byte(nil), el...))
			return nil
		}); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if len(got) != len(want.List) {
			t.Fatalf("size %d: %d elements, want %d", size, len(got), len(want.List))
		}
		for k := range got {
			if !bytes.Equal(got[k], want.List[k]) {
				t.Errorf("size %d: element %d %s, want %s", size, k, got[k], want.List[k])
			}
		}
	}
	// A document cut anywhere is an error, never a hang or a panic.
	for n := range len(doc) - 1 {
		s := newStreamSize(strings.NewReader(doc[:n]), 4)
		err := s.EachKey(func([]byte) (bool, error) { _, err := s.Value(false); return true, err })
		if err == nil {
			t.Errorf("cut at %d: no error", n)
		}
	}
}

func TestEachField(t *testing.T) {
	var keys []string
	err := EachField([]byte(` {"a": 1, "b\"c": {"x": [1, {"y": "}"}]}, "d": "e"} `), func(k, v []byte) bool {
		keys = append(keys, string(k)+"="+string(v))
		return true
	})
	if err != nil || strings.Join(keys, ";") != `a=1;b\"c={"x": [1, {"y": "}"}]};d="e"` {
		t.Errorf("%v %q", err, keys)
	}
	for _, bad := range []string{`{"a" 1}`, `{"a": 1,}`, `{"a": "1}`, `{"a": [1}`, `{"a": 1} x`, `[1]`} {
		if err := EachField([]byte(bad), func(k, v []byte) bool { return true }); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if v, _ := Path([]byte(`{"a": {"b": {"c": "d\u00e9"}}}`), "a", "b", "c"); func() string { s, _ := Str(v); return s }() != "dé" {
		t.Errorf("Path: %s", v)
	}
}

// Numbers are JSON's (RFC 8259), not all that strconv.ParseFloat reads.
func TestNumberIsJSON(t *testing.T) {
	for raw, want := range map[string]float64{"0": 0, "-0": 0, "1": 1, "0.5": 0.5, "5e-1": 0.5, "1E+0": 1, "true": 1, "false": 0} {
		if x, ok := Number([]byte(raw)); !ok || x != want {
			t.Errorf("%s: %v %v, want %v", raw, x, ok, want)
		}
	}
	for _, raw := range []string{"0x1p-1", "1_0", "Inf", "-Inf", "NaN", "+1", "01", ".5", "1.", "1e", "1e+", "-", "", "1e999", "null", `"1"`} {
		if x, ok := Number([]byte(raw)); ok {
			t.Errorf("%s read as %v", raw, x)
		}
	}
	for raw, want := range map[string]string{"7": "7", "-3": "-3", `"a/1"`: "a/1", "01": "", "1.0": "", "0x1": "", "1e2": ""} {
		if got := ID([]byte(raw)); got != want {
			t.Errorf("ID(%s) = %q, want %q", raw, got, want)
		}
	}
}

// NaN, Infinity and -Infinity outside strings become null; inside strings,
// after escapes, or as parts of other words they stay.
func TestNullNonFinite(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": NaN, "b": [Infinity,-Infinity], "c": "NaN \" NaN", "d": NaNa}`: `{"a": null, "b": [null,null], "c": "NaN \" NaN", "d": NaNa}`,
		`NaN`:               `null`,
		`{"k\\": NaN}`:      `{"k\\": null}`,
		`{"x": 1}`:          `{"x": 1}`,
		`{"s": "Infinity"}`: `{"s": "Infinity"}`,
	} {
		if got := string(NullNonFinite([]byte(in))); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
