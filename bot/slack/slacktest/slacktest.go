// Package slacktest is an in-process fake of the part of Slack's Web API
// that sleuth's Slack adapter uses, for tests here and in packages that
// post through the adapter (jobs). It speaks the real wire format:
// form-encoded or JSON requests, {"ok": …} JSON answers, HTTP 429 with
// Retry-After, file downloads behind the bot token, the external upload
// URL and the Socket Mode WebSocket URL. It records every call.
package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Who the server says the bot is (auth.test).
const (
	// BotToken is the token file downloads must carry; others are
	// redirected to a sign-in page, as Slack does.
	BotToken = "xoxb-test-token"
	// TeamID is the workspace id auth.test answers.
	TeamID = "T1"
	// BotUserID is the bot's user id auth.test answers.
	BotUserID = "UBOT"
)

// Call is one recorded request. Method is the Web API method
// ("chat.postMessage"), "GET <path>" for a download or "UPLOAD <file id>".
type Call struct {
	Method string
	Form   url.Values
	Auth   string
	At     time.Time
}

// Server is the fake. Safe for concurrent use.
type Server struct {
	// URL is the server's base URL (downloads live under URL+"/files/").
	URL string

	srv       *httptest.Server
	mu        sync.Mutex
	calls     []Call
	files     map[string][]byte         // download path → bytes
	info      map[string]map[string]any // file id → files.info "file" object
	limited   map[string]int            // method → 429 answers still to give
	failing   map[string]failure        // method → ok:false answers still to give
	uploads   map[string]string         // uploaded file id → content
	nextTS    int
	wsHandler http.HandlerFunc
}

type failure struct {
	code string
	left int // < 0: always
}

// New starts a server that closes when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		files:   map[string][]byte{},
		info:    map[string]map[string]any{},
		limited: map[string]int{},
		failing: map[string]failure{},
		uploads: map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/files/", s.serveFile)
	mux.HandleFunc("/upload/", s.serveUpload)
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>sign in</html>")
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := s.wsHandler
		s.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// APIURL is the Web API base to put in the adapter's Config.APIURL.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// AddFile serves body at path (e.g. "/files/app.log") to the bot token.
func (s *Server) AddFile(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

// SetFileInfo makes files.info answer file for id.
func (s *Server) SetFileInfo(id string, file map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info[id] = file
}

// RateLimit answers the next n calls of method with HTTP 429 and
// Retry-After: 1.
func (s *Server) RateLimit(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[method] = n
}

// Fail answers the next n calls of method with {"ok": false, "error":
// code}; n < 0 means every call from now on.
func (s *Server) Fail(method, code string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing[method] = failure{code: code, left: n}
}

// SetWebSocket serves h at the URL apps.connections.open hands out.
func (s *Server) SetWebSocket(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wsHandler = h
}

// Calls returns the recorded calls of one method, oldest first.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// AllCalls returns every recorded call, oldest first.
func (s *Server) AllCalls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Uploads returns the uploaded files' contents by file id.
func (s *Server) Uploads() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.uploads))
	for k, v := range s.uploads {
		out[k] = v
	}
	return out
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseMultipartForm(1 << 20); err != nil && err != http.ErrNotMultipart {
		_ = r.ParseForm()
	}
	form := r.Form
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		form = url.Values{}
		for k, v := range m {
			if str, ok := v.(string); ok {
				form.Set(k, str)
			} else {
				b, _ := json.Marshal(v)
				form.Set(k, string(b))
			}
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Form: form, Auth: r.Header.Get("Authorization"), At: time.Now()})
	if s.limited[method] > 0 {
		s.limited[method]--
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	fl, failing := s.failing[method]
	if failing && fl.left != 0 {
		if fl.left > 0 {
			fl.left--
			s.failing[method] = fl
		}
	} else {
		failing = false
	}
	s.mu.Unlock()

	reply := func(v map[string]any) {
		v["ok"] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
	}
	if failing {
		fail(fl.code)
		return
	}
	switch method {
	case "auth.test":
		reply(map[string]any{"url": "https://acme.slack.com/", "team": "Acme", "user": "sleuth", "team_id": TeamID, "user_id": BotUserID, "bot_id": "BBOT"})
	case "chat.postMessage":
		s.mu.Lock()
		s.nextTS++
		ts := fmt.Sprintf("1700000100.%06d", s.nextTS)
		s.mu.Unlock()
		reply(map[string]any{"channel": form.Get("channel"), "ts": ts, "message": map[string]any{"text": form.Get("text"), "ts": ts}})
	case "chat.update":
		reply(map[string]any{"channel": form.Get("channel"), "ts": form.Get("ts"), "text": form.Get("text")})
	case "reactions.add", "reactions.remove", "assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts":
		reply(map[string]any{})
	case "files.info":
		s.mu.Lock()
		file, ok := s.info[form.Get("file")]
		s.mu.Unlock()
		if !ok {
			fail("file_not_found")
			return
		}
		reply(map[string]any{"file": file})
	case "files.getUploadURLExternal":
		id := fmt.Sprintf("F_UP%d", len(s.Uploads())+1)
		reply(map[string]any{"upload_url": s.URL + "/upload/" + id, "file_id": id})
	case "files.completeUploadExternal":
		var files []map[string]any
		_ = json.Unmarshal([]byte(form.Get("files")), &files)
		reply(map[string]any{"files": files})
	case "apps.connections.open":
		reply(map[string]any{"url": "ws" + strings.TrimPrefix(s.URL, "http") + "/ws"})
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: "GET " + r.URL.Path, Auth: r.Header.Get("Authorization"), At: time.Now()})
	body, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+BotToken {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	chunked := r.URL.Query().Get("chunked") != ""
	if !chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if chunked && len(body) > 1 {
		// Flush part of it first so the response has no Content-Length.
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		body = body[len(body)/2:]
	}
	w.Write(body)
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	file, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(file)
	s.mu.Lock()
	s.uploads[id] = string(b)
	s.calls = append(s.calls, Call{Method: "UPLOAD " + id, At: time.Now()})
	s.mu.Unlock()
	io.WriteString(w, "OK - "+strconv.Itoa(len(b)))
}
