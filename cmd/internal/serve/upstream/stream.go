package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// CheckRedirect is the upstream client's redirect policy: a chat (a POST)
// is never re-sent by a redirect, to the same host or another (the 3xx is
// answered as a 502 naming where it points); a GET follows up to 5, Go's
// client dropping the Authorization header on the way to another host.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if via[0].Method != http.MethodGet && via[0].Method != http.MethodHead {
		return http.ErrUseLastResponse
	}
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	return nil
}

// ReadLine is the next line of br with its newline, at most max bytes.
func ReadLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
		if len(line) > max {
			return line, fmt.Errorf("an event line longer than %d bytes", max)
		}
	}
}

// StreamEnds reports whether the data of an event ends a chat stream: [DONE], a
// chunk with a finish reason, or an error object.
func StreamEnds(data []byte) bool {
	if bytes.HasPrefix(data, []byte("[DONE]")) {
		return true
	}
	if !bytes.Contains(data, []byte(`"finish_reason"`)) && !bytes.Contains(data, []byte(`"error"`)) {
		return false
	}
	var ev struct {
		Error   json.RawMessage `json:"error"`
		Choices []struct {
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return false
	}
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		return true
	}
	for _, c := range ev.Choices {
		if c.FinishReason != nil && *c.FinishReason != "" {
			return true
		}
	}
	return false
}
