package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/jeirt/jeirt/cmd/internal/serve/redact"
)

// requestError is an error answered with Status and OpenAI's error object,
// {"error": {"message", "type", "param", "code"}} (param and code null when
// not set), with "field" repeating param for clients of earlier versions.
type requestError struct {
	Status int
	Field  string // OpenAI's param: the request field to blame
	Msg    string
	// Type is OpenAI's error type; "" is the one of Status (errorType).
	Type string
	// Code is OpenAI's machine-readable code (invalid_api_key,
	// model_not_found, upstream_unreachable, ...); "" answers null.
	Code string
}

func (e *requestError) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Msg
	}
	return e.Msg
}

func badField(field, format string, args ...any) error {
	return &requestError{Status: http.StatusBadRequest, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// errorType is OpenAI's error type for an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status < 500:
		return "invalid_request_error"
	case status == http.StatusInternalServerError:
		return "server_error"
	}
	return "api_error"
}

// apiError is OpenAI's error object.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	Field   string  `json:"field,omitempty"`
}

// object is e as OpenAI's error object, its message passed through mask.
func (e *requestError) object(mask *redact.Masker) apiError {
	o := apiError{Message: mask.Mask(e.Error()), Type: mask.Mask(e.Type), Field: mask.Mask(e.Field)}
	if o.Type == "" {
		o.Type = errorType(e.Status)
	}
	if e.Field != "" {
		o.Param = &o.Field
	}
	if e.Code != "" {
		code := mask.Mask(e.Code)
		o.Code = &code
	}
	return o
}

// writeError answers err: a requestError with its status, anything else
// with 500; its message passes mask.
func writeError(w http.ResponseWriter, err error, mask *redact.Masker) {
	var re *requestError
	if !errors.As(err, &re) {
		re = &requestError{Status: http.StatusInternalServerError, Msg: err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(re.Status)
	w.Write([]byte(mask.Exact(string(errorJSON(re, mask)))))
}

// errorJSON is {"error": e.object(mask)} and a newline, with <, > and &
// left as they are (an upstream's HTML page quoted in a message stays
// readable).
func errorJSON(e *requestError, mask *redact.Masker) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]apiError{"error": e.object(mask)})
	return b.Bytes()
}

// writeJSON answers v with status. It encodes v before the status goes
// out, so a value JSON cannot carry (a NaN) is a 500 saying so, never a
// 200 with an empty body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]apiError{"error": {Message: "the answer could not be encoded: " + err.Error(), Type: "server_error"}})
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decodeJSON reads one JSON object from r's body (at most limit bytes) into
// v, refusing unknown fields and trailing data.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if err := checkContentType(r); err != nil {
		return err
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, limit)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badField("", "malformed JSON: data after the request object")
	}
	return nil
}

// checkContentType refuses a body declared as something JSON cannot be:
// no Content-Type, application/json (or any +json type) and curl's default
// for -d, application/x-www-form-urlencoded, are read as JSON, as an OpenAI
// client's and a shell user's requests come; text/plain, multipart/form-data
// and the like are answered 415.
func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/x-www-form-urlencoded") {
		return nil
	}
	return &requestError{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Msg: fmt.Sprintf("Content-Type %q: send application/json (or no Content-Type)", ct)}
}

func jsonError(err error, limit int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var big *http.MaxBytesError
	switch {
	case errors.As(err, &big):
		return &requestError{Status: http.StatusRequestEntityTooLarge, Code: "request_too_large", Msg: fmt.Sprintf("request body is larger than %d bytes", limit)}
	case errors.Is(err, io.EOF):
		return badField("", "empty request body: send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badField("", "malformed JSON: the body ends early")
	case errors.As(err, &syn):
		return badField("", "malformed JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(body)"
		}
		return badField(field, "want %s, got JSON %s", typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badField(name, "unknown field")
	}
	return badField("", "malformed JSON: %v", err)
}
