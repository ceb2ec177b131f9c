package upstream

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestStreamEnds(t *testing.T) {
	for data, want := range map[string]bool{
		`[DONE]`: true,
		`{"choices":[{"delta":{"content":"a"},"finish_reason":null}]}`:   false,
		`{"choices":[{"delta":{},"finish_reason":"stop"}]}`:              true,
		`{"choices":[{"delta":{},"finish_reason":""}]}`:                  false,
		`{"choices":[{"delta":{"content":"finish_reason"}}]}`:            false,
		`{"error":{"message":"overloaded","type":"server_error"}}`:       true,
		`{"error":null,"choices":[{"delta":{"content":"x"}}]}`:           false,
		`{"choices":[{"index":0},{"index":1,"finish_reason":"length"}]}`: true,
		`not json "finish_reason"`:                                       false,
	} {
		if got := StreamEnds([]byte(data)); got != want {
			t.Errorf("StreamEnds(%s) = %v, want %v", data, got, want)
		}
	}
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 300)
	br := bufio.NewReaderSize(strings.NewReader("data: a\n\n"+long+"\nlast"), 16)
	var got []string
	for {
		line, err := ReadLine(br, 1000)
		got = append(got, string(line))
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, "|") != "data: a\n|\n|"+long+"\n|last" {
		t.Errorf("lines %q", got)
	}
	br = bufio.NewReaderSize(strings.NewReader(long), 16)
	if _, err := ReadLine(br, 100); err == nil || !strings.Contains(err.Error(), "longer than 100 bytes") {
		t.Errorf("a line past the limit: %v", err)
	}
}
