package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// chat is POST /v1/chat/completions: with "model": "router" or
// "router:<rule>" (ParseRouterModel) it routes on the last user message among the models that
// have an upstream, and forwards the request (only "model" changed) to the
// chosen model's upstream; with a model name of the upstreams file it
// forwards there directly. The answer, streamed or not, is passed back as it
// comes, with the header X-Jeirt-Model naming the model.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) error {
	if len(s.upstreams) == 0 {
		return &requestError{Status: http.StatusServiceUnavailable, Code: "no_upstreams", Msg: "no upstreams: start jeirt serve with --upstreams"}
	}
	if err := checkContentType(r); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.set.MaxChatBody))
	if err != nil {
		return jsonError(err, s.set.MaxChatBody)
	}
	var req map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return jsonError(err, s.set.MaxChatBody)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badField("", "malformed JSON: data after the request object")
	}
	var name string
	if err := json.Unmarshal(req["model"], &name); err != nil || name == "" {
		return badField("model", `want "router", "router:<rule>" or a model of the upstreams file`)
	}
	var stream bool
	if raw, ok := req["stream"]; ok {
		if err := json.Unmarshal(raw, &stream); err != nil {
			return badField("stream", "want true or false")
		}
	}
	chosen := name
	p, isRouter, err := ParseRouterModel(name)
	if err != nil {
		return err
	}
	if isRouter {
		text, err := lastUserText(req["messages"])
		if err != nil {
			return err
		}
		res, err := s.decide(r, s.cur.Load(), p, []Query{{ID: "chat", Text: text}}, 0)
		if err != nil {
			// The rule and its parameters are all in the model name.
			if re, ok := err.(*requestError); ok && re.Field != "" && re.Field != "model" {
				re.Msg = fmt.Sprintf("%s: %s (in %q)", re.Field, re.Msg, name)
				re.Field = "model"
			}
			return err
		}
		chosen = res[0].Model
		w.Header().Set("X-Jeirt-Rule", res[0].Rule)
	}
	up, ok := s.upstreams[chosen]
	if !ok {
		return &requestError{Status: http.StatusBadRequest, Field: "model", Code: "model_not_found", Msg: fmt.Sprintf("%q is not a model of the upstreams file (use \"router\" to route)", chosen)}
	}
	upName, _ := json.Marshal(up.Model)
	req["model"] = upName
	fwd, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return s.forward(w, r, up, chosen, fwd, stream)
}

// lastUserText is the text of the last message with role "user": its
// content string, or the text parts of a content array.
func lastUserText(raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", badField("messages", "missing: the chat to route")
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", badField("messages", "want an array of {role, content}: %v", err)
	}
	for k := len(msgs) - 1; k >= 0; k-- {
		if msgs[k].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(msgs[k].Content, &s) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(msgs[k].Content, &parts); err != nil {
				return "", badField(fmt.Sprintf("messages[%d].content", k), "want a string or an array of content parts")
			}
			var texts []string
			for _, p := range parts {
				if p.Type == "text" {
					texts = append(texts, p.Text)
				}
			}
			s = strings.Join(texts, "\n")
		}
		if strings.TrimSpace(s) == "" {
			return "", badField(fmt.Sprintf("messages[%d].content", k), "the last user message has no text to route on")
		}
		return s, nil
	}
	return "", badField("messages", "no message with role user to route on")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (s *Server) hasUpstream(name string) bool {
	_, ok := s.upstreams[name]
	return ok
}
