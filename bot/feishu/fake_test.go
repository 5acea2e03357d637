package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"

	"github.com/sleuth-bot/sleuth/bot"
)

const (
	testToken   = "t-test-tenant-token"
	testBotID   = "ou_bot"
	testVerify  = "verify-token"
	testEncrypt = "encrypt-key"
)

// sent is one message the fake Open API accepted.
type sent struct {
	ReplyTo  string // replied message id, "" for a new message
	Chat     string
	ID       string
	MsgType  string
	Content  string
	UUID     string
	InThread bool
}

// fakeFeishu speaks the parts of the Open API the adapter uses.
type fakeFeishu struct {
	t   *testing.T
	srv *httptest.Server

	mu          sync.Mutex
	tokenCalls  int
	sends       []sent
	byUUID      map[string]string
	patches     map[string][]string // message id -> contents, in order
	reactions   []string
	files       map[string][]byte // file_key -> bytes
	noLength    bool              // stream downloads without Content-Length
	failReplies int               // reply calls answered with code 230002
	expireOnce  bool              // next authed call answers 99991663
	uploads     []string
	seq         int
}

func newFakeFeishu(t *testing.T) *fakeFeishu {
	f := &fakeFeishu{t: t, byUUID: map[string]string{}, patches: map[string][]string{}, files: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /open-apis/auth/v3/tenant_access_token/internal", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ AppID, AppSecret string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		f.tokenCalls++
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": testToken, "expire": 7200})
	})
	mux.HandleFunc("GET /open-apis/bot/v3/info", f.authed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"code": 0, "msg": "ok", "bot": map[string]any{"open_id": testBotID, "app_name": "sleuth"}})
	}))
	mux.HandleFunc("POST /open-apis/im/v1/messages/{id}/reply", f.authed(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			MsgType       string `json:"msg_type"`
			Content       string `json:"content"`
			UUID          string `json:"uuid"`
			ReplyInThread bool   `json:"reply_in_thread"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		if f.failReplies > 0 {
			f.failReplies--
			f.mu.Unlock()
			w.Header().Set(logIDHeader, "20260101-logid")
			writeJSON(w, map[string]any{"code": 230002, "msg": "Bot/User can NOT be out of the chat."})
			return
		}
		id := f.record(sent{ReplyTo: r.PathValue("id"), MsgType: in.MsgType, Content: in.Content, UUID: in.UUID, InThread: in.ReplyInThread})
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": id, "thread_id": "omt_1"}})
	}))
	mux.HandleFunc("POST /open-apis/im/v1/messages", f.authed(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ReceiveID string `json:"receive_id"`
			MsgType   string `json:"msg_type"`
			Content   string `json:"content"`
			UUID      string `json:"uuid"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		if r.URL.Query().Get("receive_id_type") != "chat_id" {
			writeJSON(w, map[string]any{"code": 99992402, "msg": "field validation failed"})
			return
		}
		f.mu.Lock()
		id := f.record(sent{Chat: in.ReceiveID, MsgType: in.MsgType, Content: in.Content, UUID: in.UUID})
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": id}})
	}))
	mux.HandleFunc("PATCH /open-apis/im/v1/messages/{id}", f.authed(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Content string `json:"content"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		f.patches[r.PathValue("id")] = append(f.patches[r.PathValue("id")], in.Content)
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "success"})
	}))
	mux.HandleFunc("POST /open-apis/im/v1/messages/{id}/reactions", f.authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reactions = append(f.reactions, r.PathValue("id"))
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"reaction_id": "r1"}})
	}))
	mux.HandleFunc("GET /open-apis/im/v1/messages/{id}/resources/{key}", f.authed(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("type") != "file" {
			writeJSON(w, map[string]any{"code": 234001, "msg": "Invalid request param."})
			return
		}
		f.mu.Lock()
		data, ok := f.files[r.PathValue("key")]
		noLength := f.noLength
		f.mu.Unlock()
		if !ok {
			w.Header().Set(logIDHeader, "logid-missing")
			writeJSON(w, map[string]any{"code": 234003, "msg": "File not in msg."})
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="app.log"`)
		if !noLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			_, _ = w.Write(data)
			return
		}
		// Chunked: write in pieces and flush so no length is known.
		for i := 0; i < len(data); i += 4096 {
			_, _ = w.Write(data[i:min(i+4096, len(data))])
			w.(http.Flusher).Flush()
		}
	}))
	mux.HandleFunc("POST /open-apis/im/v1/files", f.authed(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			writeJSON(w, map[string]any{"code": 1, "msg": err.Error()})
			return
		}
		fh, _, err := r.FormFile("file")
		if err != nil || r.FormValue("file_type") != "stream" {
			writeJSON(w, map[string]any{"code": 1, "msg": "bad upload"})
			return
		}
		b, _ := io.ReadAll(fh)
		f.mu.Lock()
		f.uploads = append(f.uploads, r.FormValue("file_name")+":"+string(b))
		f.mu.Unlock()
		writeJSON(w, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"file_key": "file_up_1"}})
	}))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// record stores a send, honouring uuid idempotency. Caller holds f.mu.
func (f *fakeFeishu) record(s sent) string {
	if id, ok := f.byUUID[s.UUID]; ok && s.UUID != "" {
		return id
	}
	f.seq++
	s.ID = fmt.Sprintf("om_sent_%d", f.seq)
	f.byUUID[s.UUID] = s.ID
	f.sends = append(f.sends, s)
	return s.ID
}

func (f *fakeFeishu) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		expire := f.expireOnce
		f.expireOnce = false
		f.mu.Unlock()
		if expire || r.Header.Get("Authorization") != "Bearer "+testToken {
			writeJSON(w, map[string]any{"code": 99991663, "msg": "Invalid access token for authorization."})
			return
		}
		h(w, r)
	}
}

func (f *fakeFeishu) snapshot() ([]sent, map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := map[string][]string{}
	for k, v := range f.patches {
		p[k] = append([]string(nil), v...)
	}
	return append([]sent(nil), f.sends...), p
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newTestAdapter(t *testing.T, f *fakeFeishu, mut func(*Config)) *Adapter {
	t.Helper()
	cfg := Config{
		AppID: "cli_test", AppSecret: "secret", BaseURL: f.srv.URL,
		Mode: ModeWebhook, VerificationToken: testVerify, EncryptKey: testEncrypt,
		Logger: testLogger(t),
	}
	if mut != nil {
		mut(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// msgEvent builds an im.message.receive_v1 event as Feishu sends it.
type msgEvent struct {
	EventID, MessageID, RootID, ChatID, ChatType, MsgType, Content, Sender string
	Mentions                                                               []map[string]any
	CreateTime                                                             time.Time
}

func (e msgEvent) json() []byte {
	if e.ChatType == "" {
		e.ChatType = "group"
	}
	if e.Sender == "" {
		e.Sender = "ou_alice"
	}
	if e.CreateTime.IsZero() {
		e.CreateTime = time.Now()
	}
	msg := map[string]any{
		"message_id": e.MessageID, "chat_id": e.ChatID, "chat_type": e.ChatType,
		"message_type": e.MsgType, "content": e.Content,
		"create_time": strconv.FormatInt(e.CreateTime.UnixMilli(), 10),
	}
	if e.RootID != "" {
		msg["root_id"] = e.RootID
		msg["parent_id"] = e.RootID
		msg["thread_id"] = "omt_" + e.RootID
	}
	if e.Mentions != nil {
		msg["mentions"] = e.Mentions
	}
	b, _ := json.Marshal(map[string]any{
		"schema": "2.0",
		"header": map[string]any{"event_id": e.EventID, "event_type": "im.message.receive_v1", "create_time": "1700000000000",
			"token": testVerify, "app_id": "cli_test", "tenant_key": "tenant_1"},
		"event": map[string]any{
			"sender":  map[string]any{"sender_id": map[string]any{"open_id": e.Sender}, "sender_type": "user", "tenant_key": "tenant_1"},
			"message": msg,
		},
	})
	return b
}

func botMention() []map[string]any {
	return []map[string]any{{"key": "@_user_1", "id": map[string]any{"open_id": testBotID}, "name": "sleuth", "tenant_key": "tenant_1"}}
}

func textContent(s string) string {
	b, _ := json.Marshal(map[string]string{"text": s})
	return string(b)
}

// postWebhook encrypts plain with the SDK's helper, signs it and posts it.
func postWebhook(t *testing.T, url string, plain []byte, ts time.Time, mutate func(*http.Request)) *http.Response {
	t.Helper()
	enc, err := larkcore.EncryptedEventMsg(context.Background(), plain, testEncrypt)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"encrypt": enc})
	req, _ := http.NewRequest(http.MethodPost, url+EventsPath, bytes.NewReader(body))
	tsStr := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set(headerTimestamp, tsStr)
	req.Header.Set(headerNonce, "nonce-1")
	req.Header.Set(headerSignature, Signature(tsStr, "nonce-1", testEncrypt, body))
	req.Header.Set("Content-Type", "application/json")
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// fakeSessions is a bot.SessionIndex in memory: claims are remembered,
// and a session exists once the runner ran a turn for it.
type fakeSessions struct {
	mu      sync.Mutex
	claimed map[string]bool
	started map[string]bool
}

func newFakeSessions() *fakeSessions {
	return &fakeSessions{claimed: map[string]bool{}, started: map[string]bool{}}
}

func (s *fakeSessions) Exists(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[key], nil
}

func (s *fakeSessions) Claim(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claimed[key] {
		return false, nil
	}
	s.claimed[key] = true
	return true, nil
}

// fakeRunner answers every turn with a scripted reply citing the first
// line of the first attachment, which it reads through the turn's Open.
type fakeRunner struct {
	sessions *fakeSessions
	mu       sync.Mutex
	turns    []bot.Turn
	read     []string
	done     chan struct{}
}

func (r *fakeRunner) Run(ctx context.Context, t bot.Turn) (bot.Reply, error) {
	r.sessions.mu.Lock()
	r.sessions.started[t.SessionKey] = true
	r.sessions.mu.Unlock()
	t.Progress("step 1/2: reading the log")
	reply := bot.Reply{Text: "**Conclusion:** no files", Steps: 1}
	var content string
	if len(t.Message.Attachments) > 0 {
		at := t.Message.Attachments[0]
		rc, err := t.Open(ctx, at)
		if err != nil {
			return bot.Reply{}, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return bot.Reply{}, err
		}
		content = string(b)
		first := content
		if i := strings.IndexByte(content, '\n'); i >= 0 {
			first = content[:i]
		}
		reply = bot.Reply{
			Text:      "**Conclusion:** the database connection pool was exhausted.",
			Evidence:  []bot.Evidence{{File: at.Name, Line: 1, Text: first, Reason: "first error", Verified: true}},
			NextSteps: []string{"Raise the pool size", "Check slow queries"},
			Steps:     3, Tokens: 1200,
		}
	}
	r.mu.Lock()
	r.turns = append(r.turns, t)
	r.read = append(r.read, content)
	r.mu.Unlock()
	if r.done != nil {
		r.done <- struct{}{}
	}
	return reply, nil
}
