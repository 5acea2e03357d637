package slack

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

// fakeSlack is an httptest server speaking the part of Slack's Web API the
// adapter uses (form-encoded requests, {"ok":…} JSON answers), plus file
// downloads and the upload URL. It records every call.
type fakeSlack struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	calls     []apiCall
	files     map[string][]byte         // download path → bytes
	info      map[string]map[string]any // file id → files.info "file" object
	limited   map[string]int            // method → 429 answers still to give
	uploads   map[string]string         // uploaded file id → content
	nextTS    int
	wsHandler func(w http.ResponseWriter, r *http.Request)
}

type apiCall struct {
	Method string
	Form   url.Values
	Auth   string
	At     time.Time
}

const testBotToken = "xoxb-test-token"

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{
		t:       t,
		files:   map[string][]byte{},
		info:    map[string]map[string]any{},
		limited: map[string]int{},
		uploads: map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", f.serveAPI)
	mux.HandleFunc("/files/", f.serveFile)
	mux.HandleFunc("/upload/", f.serveUpload)
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>sign in</html>")
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		h := f.wsHandler
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSlack) apiURL() string { return f.srv.URL + "/api/" }

func (f *fakeSlack) serveAPI(w http.ResponseWriter, r *http.Request) {
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
			if s, ok := v.(string); ok {
				form.Set(k, s)
			} else {
				b, _ := json.Marshal(v)
				form.Set(k, string(b))
			}
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{Method: method, Form: form, Auth: r.Header.Get("Authorization"), At: time.Now()})
	if f.limited[method] > 0 {
		f.limited[method]--
		f.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	f.mu.Unlock()

	reply := func(v map[string]any) {
		v["ok"] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": code})
	}
	switch method {
	case "auth.test":
		reply(map[string]any{"url": "https://acme.slack.com/", "team": "Acme", "user": "sleuth", "team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"})
	case "chat.postMessage":
		f.mu.Lock()
		f.nextTS++
		ts := fmt.Sprintf("1700000100.%06d", f.nextTS)
		f.mu.Unlock()
		reply(map[string]any{"channel": form.Get("channel"), "ts": ts, "message": map[string]any{"text": form.Get("text"), "ts": ts}})
	case "chat.update":
		reply(map[string]any{"channel": form.Get("channel"), "ts": form.Get("ts"), "text": form.Get("text")})
	case "reactions.add", "reactions.remove", "assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts":
		reply(map[string]any{})
	case "files.info":
		f.mu.Lock()
		file, ok := f.info[form.Get("file")]
		f.mu.Unlock()
		if !ok {
			fail("file_not_found")
			return
		}
		reply(map[string]any{"file": file})
	case "files.getUploadURLExternal":
		id := fmt.Sprintf("F_UP%d", len(f.uploadsSnapshot())+1)
		reply(map[string]any{"upload_url": f.srv.URL + "/upload/" + id, "file_id": id})
	case "files.completeUploadExternal":
		var files []map[string]any
		_ = json.Unmarshal([]byte(form.Get("files")), &files)
		reply(map[string]any{"files": files})
	case "apps.connections.open":
		reply(map[string]any{"url": "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws"})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeSlack) serveFile(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{Method: "GET " + r.URL.Path, Auth: r.Header.Get("Authorization"), At: time.Now()})
	body, ok := f.files[r.URL.Path]
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+testBotToken {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("chunked") == "" {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if r.URL.Query().Get("chunked") != "" && len(body) > 1 {
		// Flush part of it first so the response has no Content-Length.
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		body = body[len(body)/2:]
	}
	w.Write(body)
}

func (f *fakeSlack) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	file, _, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(file)
	f.mu.Lock()
	f.uploads[id] = string(b)
	f.calls = append(f.calls, apiCall{Method: "UPLOAD " + id, At: time.Now()})
	f.mu.Unlock()
	io.WriteString(w, "OK - "+strconv.Itoa(len(b)))
}

func (f *fakeSlack) uploadsSnapshot() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.uploads {
		out[k] = v
	}
	return out
}

// callsTo returns the recorded calls of one method.
func (f *fakeSlack) callsTo(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSlack) allCalls() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiCall(nil), f.calls...)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
