package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

type memIndex struct {
	mu      sync.Mutex
	claimed map[string]bool
}

func (m *memIndex) Exists(context.Context, string) (bool, error) { return false, nil }
func (m *memIndex) Claim(_ context.Context, k string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claimed[k] {
		return false, nil
	}
	m.claimed[k] = true
	return true, nil
}

type echoRunner struct{}

// Run answers with the session key, the text and the first attachment's
// content, and cites line 1 of it.
func (echoRunner) Run(ctx context.Context, t bot.Turn) (bot.Reply, error) {
	var content string
	if len(t.Message.Attachments) > 0 {
		rc, err := t.Open(ctx, t.Message.Attachments[0])
		if err != nil {
			return bot.Reply{}, err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return bot.Reply{}, err
		}
		content = string(b)
	}
	t.Progress("step 1/1: echo")
	return bot.Reply{
		Text:     t.SessionKey + "|" + t.Message.User + "|" + t.Message.Text + "|" + content,
		Evidence: []bot.Evidence{{File: "a.log", Line: 1, Text: "x", Verified: true}},
		Steps:    1,
	}, nil
}

func setup(t *testing.T, maxBytes int64) (*Adapter, *httptest.Server) {
	t.Helper()
	a, err := New(Config{SpoolDir: t.TempDir(), MaxAttachmentBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	r, err := bot.NewRouter(bot.RouterConfig{Runner: echoRunner{}, Sessions: &memIndex{claimed: map[string]bool{}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Attach(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = r.Run(ctx); done <- struct{}{} }()
	go func() { _ = a.Run(ctx, r); done <- struct{}{} }()
	mux := http.NewServeMux()
	a.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); cancel(); <-done; <-done })
	// Wait until the adapter has its inbox.
	for i := 0; i < 100; i++ {
		if _, err := a.getInbox(); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return a, srv
}

func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func TestHTTPMessagesEndToEnd(t *testing.T) {
	_, srv := setup(t, 1<<20)
	code, out := post(t, srv.URL, map[string]any{
		"text":        "why?",
		"user":        "alice",
		"attachments": []map[string]string{{"name": "app.log", "content_base64": base64.StdEncoding.EncodeToString([]byte("ERROR boom\n"))}},
	})
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, out)
	}
	thread, _ := out["thread"].(string)
	reply, _ := out["reply"].(string)
	if thread == "" || reply != "local/local/local/"+thread+"|alice|why?|ERROR boom\n" {
		t.Fatalf("thread %q reply %q", thread, reply)
	}
	if ev, _ := out["evidence"].([]any); len(ev) != 1 {
		t.Fatalf("evidence %v", out["evidence"])
	}
	// A follow-up in the same thread reaches the same session.
	code, out = post(t, srv.URL, map[string]any{"text": "and?", "thread": thread, "user": "alice"})
	if code != http.StatusOK || !strings.HasPrefix(out["reply"].(string), "local/local/local/"+thread+"|alice|and?") {
		t.Fatalf("follow-up %d %v", code, out)
	}
}

func TestHTTPMessagesBadInput(t *testing.T) {
	_, srv := setup(t, 4)
	for name, tc := range map[string]struct {
		body string
		code int
		want string
	}{
		"not json":     {`{"text":`, 400, "invalid JSON"},
		"unknown":      {`{"txt":"x"}`, 400, "invalid JSON"},
		"empty":        {`{"text":"  "}`, 400, "required"},
		"no content":   {`{"text":"x","attachments":[{"name":"a"}]}`, 400, "path or content_base64"},
		"too large":    {`{"text":"x","attachments":[{"name":"a","content_base64":"` + base64.StdEncoding.EncodeToString([]byte("123456")) + `"}]}`, 400, "size limit"},
		"bad base64":   {`{"text":"x","attachments":[{"name":"a","content_base64":"!!!"}]}`, 400, "content_base64"},
		"missing file": {`{"text":"x","attachments":[{"name":"a","path":"/nonexistent/file.log"}]}`, 400, "no such file"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
				t.Fatalf("got %d %s; want %d containing %q", resp.StatusCode, b, tc.code, tc.want)
			}
		})
	}
}

func TestTerminalChat(t *testing.T) {
	a, _ := setup(t, 1<<20)
	dir := t.TempDir()
	path := dir + "/app.log"
	if err := writeFile(path, "line one\n"); err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("/attach " + path + "\nwhat broke?\n/attach /nope\n/new\nhello\n/quit\n")
	var out bytes.Buffer
	if err := a.Terminal(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"attached app.log", "|local-user|what broke?|line one", "cannot attach", "(new thread)", "|local-user|hello|", "L1 a.log: x"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%s", want, got)
		}
	}
}

func TestPostIsKept(t *testing.T) {
	a, srv := setup(t, 1<<20)
	id, err := a.Post(context.Background(), bot.Conversation{Platform: "local", Channel: "ops"}, bot.Reply{Text: "daily digest"})
	if err != nil || id == "" {
		t.Fatalf("post: %q %v", id, err)
	}
	resp, err := http.Get(srv.URL + "/v1/posts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var posts []Post
	if err := json.NewDecoder(resp.Body).Decode(&posts); err != nil {
		t.Fatal(err)
	}
	if len(posts) != 1 || posts[0].Text != "daily digest" || posts[0].Conversation.Channel != "ops" {
		t.Fatalf("posts %+v", posts)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
