// Command fake-upstream is a stand-in for a model's OpenAI-compatible
// server, for trying jeirt serve without one: POST /v1/chat/completions
// answers "echo from MODEL: " and the last user message, as one
// chat.completion or, with "stream": true, as chat.completion.chunk
// server-sent events; GET /v1/models lists the models it was asked for.
// No key is needed and nothing leaves the machine.
//
//	go run ./scripts/fake-upstream --addr 127.0.0.1:9000 &
//
// It prints "fake-upstream: listening on http://ADDR/v1" once it listens
// (--addr 127.0.0.1:0 picks a free port) and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "address to listen on (port 0: any free port)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-upstream:", err)
		os.Exit(1)
	}
	fmt.Printf("fake-upstream: listening on http://%s/v1\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "fake-upstream:", err)
		os.Exit(1)
	}
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func handler() http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string    `json:"model"`
			Stream   bool      `json:"stream"`
			Messages []message `json:"messages"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil || req.Model == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, fmt.Sprint("want a JSON chat request with a model: ", err))
			return
		}
		mu.Lock()
		seen[req.Model] = true
		mu.Unlock()
		reply := "echo from " + req.Model + ": " + lastUser(req.Messages)
		id, created := fmt.Sprintf("chatcmpl-echo-%d", time.Now().UnixNano()), time.Now().Unix()
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": reply}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 0, "completion_tokens": len(strings.Fields(reply)), "total_tokens": len(strings.Fields(reply))}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		chunk := func(delta map[string]string, finish any) {
			b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		chunk(map[string]string{"role": "assistant", "content": ""}, nil)
		words := strings.SplitAfter(reply, " ")
		for _, word := range words {
			chunk(map[string]string{"content": word}, nil)
		}
		chunk(map[string]string{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		var names []string
		for n := range seen {
			names = append(names, n)
		}
		mu.Unlock()
		slices.Sort(names)
		data := []any{}
		for _, n := range names {
			data = append(data, map[string]any{"id": n, "object": "model", "created": 0, "owned_by": "fake-upstream"})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	})
	return mux
}

// lastUser is the text of the last user message: its content string, or
// the text parts of a content array.
func lastUser(msgs []message) string {
	for k := len(msgs) - 1; k >= 0; k-- {
		if msgs[k].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(msgs[k].Content, &s) == nil {
			return s
		}
		var parts []struct{ Type, Text string }
		json.Unmarshal(msgs[k].Content, &parts)
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}
