package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
	"github.com/jeirt/jeirt/cmd/internal/serve/upstream"
)

// maxUpstreamBody is the largest answer serve reads whole from an upstream
// (a chat not streamed); maxEventLine the longest line of a stream.
const (
	maxUpstreamBody = 64 << 20
	maxEventLine    = 16 << 20
)

// upstreamError is a 502 about up: its message says which upstream, at
// which (masked) URL, and what went wrong; reason labels the metric
// jeirt_upstream_failures_total and code is OpenAI's error code.
func (s *Server) upstreamError(up Upstream, reason, code, format string, args ...any) error {
	s.metrics.upstreamFailures.WithLabelValues(up.Name, reason).Inc()
	msg := fmt.Sprintf("upstream %q (%s) %s", up.Name, up.URL(), fmt.Sprintf(format, args...))
	s.set.Log.Printf("serve: %s", msg)
	return &requestError{Status: http.StatusBadGateway, Field: "model", Code: code, Msg: msg}
}

// forward sends the chat request body fwd to up and passes its answer back
// to w with X-Jeirt-Model: chosen. Nothing the upstream says reaches the
// client or the log unmasked: a failure is a 502 whose text passes
// Server.mask; the body of a successful answer, streamed or not, passes its
// Exact part (the request's credentials echoed are masked, the model's words
// kept). An answer that is not JSON (an HTML page with 200) is a 502 saying
// what came back; a stream that ends without [DONE] or a finish reason ends
// with an error event (OpenAI's error object), a log line and the metric.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, up Upstream, chosen string, fwd []byte, stream bool) error {
	mask := s.mask()
	ctx, cancel := context.WithTimeout(r.Context(), s.set.UpstreamTimeout)
	defer cancel()
	endpoint, err := up.Endpoint("chat", "completions")
	if err != nil {
		return err
	}
	ureq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(fwd))
	if err != nil {
		return err
	}
	ureq.Header.Set("Content-Type", "application/json")
	if a := r.Header.Get("Accept"); a != "" {
		ureq.Header.Set("Accept", a)
	}
	if up.APIKeyEnv != "" {
		ureq.Header.Set("Authorization", "Bearer "+os.Getenv(up.APIKeyEnv))
	}
	resp, err := s.client.Do(ureq)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return s.upstreamError(up, "timeout", "upstream_timeout", "failed: no answer within %v", s.set.UpstreamTimeout)
		}
		if r.Context().Err() != nil {
			return s.clientLeft(up, "before upstream %q answered", up.Name)
		}
		return s.upstreamError(up, "unreachable", "upstream_unreachable", "failed: %s", mask.Mask(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return s.upstreamError(up, "redirect", "upstream_redirect",
			"answered %s to %s: a chat is never re-sent by a redirect (it would carry the key); set base_url to the address the redirect names",
			mask.Mask(resp.Status), mask.URL(resp.Header.Get("Location")))
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err := s.clientsFault(w, resp, up, body, mask); err != nil {
			return err
		}
		return s.upstreamError(up, "status", "upstream_error", "answered %s: %s", mask.Mask(resp.Status), mask.Excerpt(body))
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	if mt != "text/event-stream" && stream {
		// Server-sent events under another Content-Type are still a stream.
		head, _ := br.Peek(6)
		if h := string(head); strings.HasPrefix(h, "data:") || strings.HasPrefix(h, "event:") || strings.HasPrefix(h, ":") {
			mt = "text/event-stream"
		}
	}
	if mt != "text/event-stream" {
		body, err := io.ReadAll(io.LimitReader(br, maxUpstreamBody+1))
		switch {
		case err != nil && r.Context().Err() != nil:
			return s.clientLeft(up, "while upstream %q answered (%d bytes read)", up.Name, len(body))
		case errors.Is(err, context.DeadlineExceeded):
			return s.upstreamError(up, "timeout", "upstream_timeout", "did not finish its answer within %v", s.set.UpstreamTimeout)
		case err != nil:
			return s.upstreamError(up, "cut", "upstream_error", "stopped mid-answer after %d bytes: %s", len(body), mask.Mask(err.Error()))
		case len(body) > maxUpstreamBody:
			return s.upstreamError(up, "too_large", "upstream_invalid_response", "answered more than %d bytes", maxUpstreamBody)
		case !json.Valid(body):
			if ct == "" {
				ct = "no Content-Type"
			}
			return s.upstreamError(up, "not_json", "upstream_invalid_response",
				"answered %s with %s, not the JSON of a chat completion (is base_url the API root, …/v1?): %s",
				mask.Mask(resp.Status), mask.Mask(ct), mask.Excerpt(body))
		case stream:
			// An SDK reading this as a stream would find no event and end
			// as if the answer were empty.
			return s.upstreamError(up, "not_json", "upstream_invalid_response",
				"answered a streamed chat with %s, not server-sent events (text/event-stream): %s", mask.Mask(ct), mask.Excerpt(body))
		}
		s.passHeaders(w, resp, chosen, mask)
		w.WriteHeader(resp.StatusCode)
		_, err = w.Write([]byte(mask.Exact(string(body))))
		return err
	}
	s.passHeaders(w, resp, chosen, mask)
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(s.set.UpstreamTimeout))
	w.WriteHeader(resp.StatusCode)
	return s.relayStream(r.Context(), w, rc, br, up, mask)
}

// clientLeft is the error of a chat whose client went away: a client
// disconnect (jeirt_client_disconnects_total and a log line), never an
// upstream failure.
func (s *Server) clientLeft(up Upstream, format string, args ...any) error {
	s.metrics.clientDisconnects.WithLabelValues(up.Name).Inc()
	msg := "the client went away " + fmt.Sprintf(format, args...)
	s.set.Log.Printf("serve: %s", msg)
	return errors.New(msg)
}

// clientsFault answers an upstream's refusal that is the client's to fix,
// as OpenAI would have answered it, with the upstream's status and error
// object (masked) and its name said: 400 and 422 (a parameter the model
// does not take, a context too long) and 429 (with Retry-After: the client
// backs off). It returns nil for any other status, which is a 502: a wrong
// key or base_url, or a failure of the upstream, is the server's.
func (s *Server) clientsFault(w http.ResponseWriter, resp *http.Response, up Upstream, body []byte, mask *redact.Masker) error {
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusTooManyRequests:
	default:
		return nil
	}
	var their struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Param   *string         `json:"param"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(body, &their)
	msg := their.Error.Message
	if msg == "" {
		msg = string(body)
	}
	re := &requestError{Status: resp.StatusCode, Type: their.Error.Type,
		Msg: fmt.Sprintf("upstream %q (%s) answered %s: %s", up.Name, up.URL(), mask.Mask(resp.Status), mask.Excerpt([]byte(msg)))}
	if their.Error.Param != nil {
		re.Field = *their.Error.Param
	}
	var code string
	if json.Unmarshal(their.Error.Code, &code) == nil {
		re.Code = code
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" && resp.StatusCode == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", mask.Mask(ra))
	}
	s.metrics.upstreamFailures.WithLabelValues(up.Name, "refused").Inc()
	s.set.Log.Printf("serve: %s", re.Msg)
	return re
}

func (s *Server) passHeaders(w http.ResponseWriter, resp *http.Response, chosen string, mask *redact.Masker) {
	for _, h := range []string{"Content-Type", "Cache-Control", "X-Request-Id"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, mask.Mask(v))
		}
	}
	w.Header().Set("X-Jeirt-Model", chosen)
}

// relayStream passes server-sent events from body to w event by event, each
// event masked whole (redact.Masker.Event) and flushed. A stream is complete when it
// says data: [DONE], or an event carries a finish reason or an error; one
// that ends otherwise (the upstream closed the connection, or it broke) gets
// an error event, so that an OpenAI SDK's loop over the stream throws
// instead of returning a cut answer as if whole. A client that goes away
// (client, its request's context, done) is a client disconnect, not an
// upstream failure.
func (s *Server) relayStream(client context.Context, w http.ResponseWriter, rc *http.ResponseController, body io.Reader, up Upstream, mask *redact.Masker) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var complete bool
	events := 0
	var cut error
	var last []byte    // the last line passed on
	var event [][]byte // the lines of the event being read
	size := 0
	pass := func(lines [][]byte) error {
		if len(lines) == 0 {
			return nil
		}
		if _, werr := w.Write(mask.Event(lines)); werr != nil {
			if client.Err() != nil {
				return s.clientLeft(up, "during the stream of upstream %q, after %s", up.Name, countEvents(events))
			}
			return fmt.Errorf("passing on the stream of upstream %q: %w", up.Name, werr)
		}
		rc.Flush()
		return nil
	}
	for {
		line, err := upstream.ReadLine(br, maxEventLine)
		if len(line) > 0 {
			last = line
			if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				events++
				if upstream.StreamEnds(bytes.TrimSpace(data)) {
					complete = true
				}
			}
			switch trimmed := bytes.TrimRight(line, "\r\n"); {
			case len(event) == 0 && len(trimmed) > 0 && trimmed[0] == ':': // a comment (keep-alive) alone: now
				if perr := pass([][]byte{line}); perr != nil {
					return perr
				}
			default:
				event, size = append(event, line), size+len(line)
				if len(trimmed) == 0 { // a blank line ends the event
					if perr := pass(event); perr != nil {
						return perr
					}
					event, size = event[:0], 0
				} else if size > maxEventLine && err == nil {
					err = fmt.Errorf("an event longer than %d bytes", maxEventLine)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			cut = err
			break
		}
	}
	if client.Err() != nil {
		return s.clientLeft(up, "during the stream of upstream %q, after %s", up.Name, countEvents(events))
	}
	if cut == nil || size <= maxEventLine { // the last event, unended, still masked whole
		if perr := pass(event); perr != nil {
			return perr
		}
	}
	if complete {
		return nil
	}
	why := "closed the stream"
	if cut != nil {
		why = "broke off the stream (" + mask.Mask(cut.Error()) + ")"
	}
	if errors.Is(cut, context.DeadlineExceeded) {
		why = fmt.Sprintf("did not finish the stream within %v", s.set.UpstreamTimeout)
	}
	re := s.upstreamError(up, "truncated", "upstream_stream_truncated",
		"%s after %s without data: [DONE] or a finish reason: the answer is incomplete", why, countEvents(events)).(*requestError)
	// End the upstream's last event first, if it was left open.
	end := ""
	if len(last) > 0 && last[len(last)-1] != '\n' {
		end = "\n\n"
	} else if len(bytes.TrimSpace(last)) > 0 {
		end = "\n"
	}
	rc.SetWriteDeadline(time.Now().Add(10 * time.Second)) // the stream's own deadline may have passed with the upstream's
	fmt.Fprintf(w, "%sdata: %s\n\n", end, mask.Exact(string(errorJSON(re, mask))))
	rc.Flush()
	return nil
}

// countEvents is "1 event", "2 events".
func countEvents(n int) string {
	if n == 1 {
		return "1 event"
	}
	return fmt.Sprintf("%d events", n)
}
