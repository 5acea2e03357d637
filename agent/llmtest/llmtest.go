// Package llmtest is a scripted OpenAI-compatible server for tests: it
// answers POST /v1/chat/completions with the replies a test scripts (text,
// tool calls, HTTP errors, delays, broken bodies) in order, answers
// POST /v1/embeddings with deterministic vectors, and records every request.
//
//	srv := llmtest.New(t,
//		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "analyze-log", Args: `{"file":"app.log"}`}}},
//		llmtest.Reply{Text: "The export job exhausted the pool (app.log:525)."},
//	)
//	// point the client at srv.URL (it ends in /v1)
//	reqs := srv.Requests()
//
// When the script is exhausted the server answers 500 with the message
// "llmtest: script exhausted", so a test that expected fewer calls sees it.
// Safe for concurrent use.
package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// ToolCall is a function call in a scripted reply or a recorded message.
type ToolCall struct {
	ID   string // default "call_<n>"
	Name string
	Args string // JSON text, sent verbatim (may be broken on purpose)
}

// Reply is one scripted answer.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	// Status is the HTTP status; 0 means 200. A non-200 status sends an
	// OpenAI error body with Text (or the status text) as its message.
	Status int
	// Delay is waited before answering (or until the client gives up).
	Delay time.Duration
	// Raw, when set, is sent verbatim as the body (with Status or 200).
	Raw string
	// PromptTokens and CompletionTokens are reported as usage; 0 means an
	// estimate (request bytes / 4, reply bytes / 4).
	PromptTokens, CompletionTokens int
	// Func, when set, computes the reply from the request (the other fields
	// are ignored).
	Func func(Request) Reply
}

// Message is one chat message of a recorded request.
type Message struct {
	Role       string
	Content    string // text parts joined with "\n"
	Name       string
	ToolCallID string
	ToolCalls  []ToolCall
}

// Request is one recorded chat request.
type Request struct {
	Body        []byte // the raw JSON body
	Model       string
	Messages    []Message
	Tools       []string // function names offered
	ToolChoice  any
	Stream      bool
	Temperature *float64
}

// EstimatedTokens is the request's size in tokens estimated as bytes/4.
func (r Request) EstimatedTokens() int { return len(r.Body)/4 + 1 }

// System returns the text of the request's system messages.
func (r Request) System() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// Server is the scripted server. URL ends in /v1.
type Server struct {
	URL string
	// EmbeddingDim is the dimension of /v1/embeddings vectors; 0 means 64.
	EmbeddingDim int

	srv      *httptest.Server
	mu       sync.Mutex
	script   []Reply
	requests []Request
	calls    int
}

// New starts a server with a script and stops it when the test ends.
func New(t testing.TB, script ...Reply) *Server {
	t.Helper()
	s := &Server{script: append([]Reply(nil), script...)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /embeddings", s.embeddings)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Push appends replies to the script.
func (s *Server) Push(rs ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, rs...)
}

// Requests returns the chat requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining returns how many scripted replies were not used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Close stops the server early.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := parseRequest(body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.calls++
	n := s.calls
	var rep Reply
	exhausted := len(s.script) == 0
	if !exhausted {
		rep = s.script[0]
		s.script = s.script[1:]
	}
	s.mu.Unlock()
	if exhausted {
		writeError(w, http.StatusInternalServerError, "llmtest: script exhausted")
		return
	}
	if rep.Func != nil {
		rep = rep.Func(req)
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, rep.Raw)
		return
	}
	if status != http.StatusOK {
		msg := rep.Text
		if msg == "" {
			msg = http.StatusText(status)
		}
		writeError(w, status, msg)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		var tcs []map[string]any
		for i, tc := range rep.ToolCalls {
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", n, i+1)
			}
			tcs = append(tcs, map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Args}})
		}
		msg["tool_calls"] = tcs
		finish = "tool_calls"
	}
	pt, ct := rep.PromptTokens, rep.CompletionTokens
	if pt == 0 {
		pt = len(body)/4 + 1
	}
	if ct == 0 {
		ct = len(rep.Text)/4 + 1
	}
	resp := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest_error", "code": status}})
}

func parseRequest(body []byte) Request {
	var raw struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			Name       string          `json:"name"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		ToolChoice  any      `json:"tool_choice"`
		Stream      bool     `json:"stream"`
		Temperature *float64 `json:"temperature"`
	}
	req := Request{Body: body}
	if err := json.Unmarshal(body, &raw); err != nil {
		return req
	}
	req.Model, req.ToolChoice, req.Stream, req.Temperature = raw.Model, raw.ToolChoice, raw.Stream, raw.Temperature
	for _, t := range raw.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for _, m := range raw.Messages {
		msg := Message{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID, Content: contentText(m.Content)}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	return req
}

// contentText accepts a string or an array of content parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	return ""
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var inputs []string
	switch v := req.Input.(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, x := range v {
			inputs = append(inputs, fmt.Sprint(x))
		}
	}
	s.mu.Lock()
	dim := s.EmbeddingDim
	s.mu.Unlock()
	if dim <= 0 {
		dim = 64
	}
	var data []any
	for i, in := range inputs {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": Embed(in, dim)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1}})
}

// Embed is the server's deterministic embedding: hashed lower-cased words,
// L2-normalised. Texts sharing words have positive cosine similarity.
func Embed(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[int(h.Sum32()%uint32(dim))]++
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}
