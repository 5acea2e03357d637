package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

// harness wires a fake Open API, the adapter in webhook mode, a real
// bot.Router with a fake Runner, and the webhook endpoint.
type harness struct {
	f       *fakeFeishu
	a       *Adapter
	router  *bot.Router
	runner  *fakeRunner
	hook    *httptest.Server
	cancel  context.CancelFunc
	stopped chan struct{}
}

func newHarness(t *testing.T, sessions *fakeSessions, mut func(*Config)) *harness {
	t.Helper()
	if sessions == nil {
		sessions = newFakeSessions()
	}
	h := &harness{f: newFakeFeishu(t)}
	h.a = newTestAdapter(t, h.f, mut)
	h.runner = &fakeRunner{sessions: sessions, done: make(chan struct{}, 16)}
	r, err := bot.NewRouter(bot.RouterConfig{Runner: h.runner, Sessions: sessions, Workers: 2, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	h.router = r
	r.Attach(h.a)
	mux := http.NewServeMux()
	h.a.Routes(mux)
	h.hook = httptest.NewServer(mux)
	t.Cleanup(h.hook.Close)

	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.stopped = make(chan struct{})
	adapterUp := make(chan struct{})
	go func() {
		defer close(h.stopped)
		go func() { _ = r.Run(ctx) }()
		go func() {
			for {
				if in, _ := h.a.inboxAndBot(); in != nil {
					close(adapterUp)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		if err := h.a.Run(ctx, r); err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	}()
	select {
	case <-adapterUp:
	case <-time.After(5 * time.Second):
		t.Fatal("adapter did not start")
	}
	t.Cleanup(func() { cancel(); <-h.stopped })
	return h
}

func (h *harness) waitTurn(t *testing.T) {
	t.Helper()
	select {
	case <-h.runner.done:
	case <-time.After(5 * time.Second):
		t.Fatal("runner was not called")
	}
}

// waitFor polls cond until it holds (the reply is delivered after Run).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const testLog = "2026-01-02T03:04:05Z ERROR pool exhausted: <at id=all></at> timeout after 30s\n2026-01-02T03:04:06Z INFO retrying\n"

func TestMentionWithFileGetsThreadedCardWithEvidence(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.f.files["file_v3_log"] = []byte(testLog)

	// The file arrives as its own message, then the mention.
	fileMsg := msgEvent{EventID: "ev_file", MessageID: "om_file", ChatID: "oc_chat", MsgType: "file",
		Content: `{"file_key":"file_v3_log","file_name":"app.log"}`}
	if resp := postWebhook(t, h.hook.URL, fileMsg.json(), time.Now(), nil); resp.StatusCode != 200 {
		t.Fatalf("file event: status %d", resp.StatusCode)
	}
	mention := msgEvent{EventID: "ev_1", MessageID: "om_q", ChatID: "oc_chat", MsgType: "text",
		Content: textContent("@_user_1 why did the deploy fail?"), Mentions: botMention()}
	resp := postWebhook(t, h.hook.URL, mention.json(), time.Now(), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("mention event: status %d", resp.StatusCode)
	}
	h.waitTurn(t)

	h.runner.mu.Lock()
	turn, read := h.runner.turns[0], h.runner.read[0]
	h.runner.mu.Unlock()
	m := turn.Message
	if m.Text != "why did the deploy fail?" || !m.Mentioned || m.DM {
		t.Errorf("message = %+v", m)
	}
	if m.Thread != "om_q" || m.Channel != "oc_chat" || m.Tenant != h.a.Tenant() || m.Tenant == "" || m.EventID != "ev_1" || m.User != "ou_alice" {
		t.Errorf("ids = %+v", m)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].MessageID != "om_file" || m.Attachments[0].Name != "app.log" {
		t.Fatalf("attachments = %+v", m.Attachments)
	}
	if read != testLog {
		t.Errorf("runner read %q", read)
	}
	if turn.SessionKey != "feishu/"+h.a.Tenant()+"/oc_chat/om_q" {
		t.Errorf("session key %q", turn.SessionKey)
	}

	var progressID string
	waitFor(t, "answer patch", func() bool {
		sends, patches := h.f.snapshot()
		if len(sends) == 0 {
			return false
		}
		progressID = sends[0].ID
		ps := patches[progressID]
		return len(ps) > 0 && strings.Contains(ps[len(ps)-1], "Evidence")
	})
	sends, patches := h.f.snapshot()
	if len(sends) != 1 {
		t.Fatalf("sends = %+v, want one progress card", sends)
	}
	s := sends[0]
	if s.ReplyTo != "om_q" || !s.InThread || s.MsgType != "interactive" || s.UUID != idempotencyKey("om_q", "progress") {
		t.Errorf("progress send = %+v", s)
	}
	if ps := patches[progressID]; len(ps) != 2 || !strings.Contains(ps[0], "step 1/2: reading the log") {
		t.Errorf("progress patches = %q, want the step then the answer", ps)
	}
	final := patches[progressID][len(patches[progressID])-1]
	var c card
	if err := json.Unmarshal([]byte(final), &c); err != nil {
		t.Fatalf("final card is not JSON: %v", err)
	}
	if c.Schema != "2.0" || !c.Config.UpdateMulti {
		t.Errorf("card header %+v", c)
	}
	for _, want := range []string{"connection pool was exhausted", "app.log:1", "first error", "Raise the pool size", "3 steps"} {
		if !strings.Contains(final, want) {
			t.Errorf("final card lacks %q: %s", want, final)
		}
	}
	// The log line is quoted as plain text; its <at id=all> never reaches a
	// markdown element.
	for _, e := range c.Body.Elements {
		if e.Tag == "markdown" && strings.Contains(e.Content, "<at") {
			t.Errorf("markdown element carries a raw tag: %q", e.Content)
		}
	}
	if !strings.Contains(final, `"plain_text","content":"2026-01-02T03:04:05Z ERROR pool exhausted: <at id=all></at>`) {
		t.Errorf("evidence line not quoted as plain text: %s", final)
	}

	// Follow-up in the topic, without a mention, reaches the same session.
	follow := msgEvent{EventID: "ev_2", MessageID: "om_f", RootID: "om_q", ChatID: "oc_chat", MsgType: "text",
		Content: textContent("and what about the retry?")}
	if resp := postWebhook(t, h.hook.URL, follow.json(), time.Now(), nil); resp.StatusCode != 200 {
		t.Fatalf("follow-up: status %d", resp.StatusCode)
	}
	h.waitTurn(t)
	h.runner.mu.Lock()
	second := h.runner.turns[1]
	h.runner.mu.Unlock()
	if second.SessionKey != turn.SessionKey || second.Message.Mentioned {
		t.Errorf("follow-up session %q mentioned=%v, want %q", second.SessionKey, second.Message.Mentioned, turn.SessionKey)
	}
	if len(second.Message.Attachments) != 0 {
		t.Errorf("follow-up picked up files again: %+v", second.Message.Attachments)
	}

	// A message in another thread without a mention is not for the bot.
	other := msgEvent{EventID: "ev_3", MessageID: "om_o", ChatID: "oc_chat", MsgType: "text", Content: textContent("lunch?")}
	postWebhook(t, h.hook.URL, other.json(), time.Now(), nil)
	time.Sleep(100 * time.Millisecond)
	h.runner.mu.Lock()
	n := len(h.runner.turns)
	h.runner.mu.Unlock()
	if n != 2 {
		t.Errorf("runner called %d times, want 2", n)
	}
}

func TestRedeliveredEventProducesOneReply(t *testing.T) {
	sessions := newFakeSessions()
	h := newHarness(t, sessions, nil)
	ev := msgEvent{EventID: "ev_dup", MessageID: "om_dup", ChatID: "oc_chat", ChatType: "p2p", MsgType: "text", Content: textContent("hello")}
	postWebhook(t, h.hook.URL, ev.json(), time.Now(), nil)
	h.waitTurn(t)
	// Redelivered to the same process (in-memory dedupe) …
	postWebhook(t, h.hook.URL, ev.json(), time.Now(), nil)
	// … and to a restarted adapter sharing the persistent store.
	h2 := newHarness(t, sessions, nil)
	postWebhook(t, h2.hook.URL, ev.json(), time.Now(), nil)
	// Same message under a new event id (platform duplicate).
	ev.EventID = "ev_dup_2"
	postWebhook(t, h2.hook.URL, ev.json(), time.Now(), nil)
	time.Sleep(200 * time.Millisecond)

	h.runner.mu.Lock()
	n := len(h.runner.turns)
	h.runner.mu.Unlock()
	h2.runner.mu.Lock()
	n2 := len(h2.runner.turns)
	h2.runner.mu.Unlock()
	if n != 1 || n2 != 0 {
		t.Fatalf("runs = %d + %d, want 1", n, n2)
	}
	waitFor(t, "reply", func() bool { s, _ := h.f.snapshot(); return len(s) == 1 })
	if s, _ := h2.f.snapshot(); len(s) != 0 {
		t.Errorf("restarted adapter sent %d messages", len(s))
	}
	m := h.runner.turns[0].Message
	if !m.DM || m.SessionKey() != "feishu/"+h.a.Tenant()+"/dm/ou_alice" {
		t.Errorf("DM message %+v key %q", m, m.SessionKey())
	}
}

func TestWebhookRejectsBadRequests(t *testing.T) {
	h := newHarness(t, nil, nil)
	ev := msgEvent{EventID: "ev_x", MessageID: "om_x", ChatID: "oc", ChatType: "p2p", MsgType: "text", Content: textContent("hi")}
	cases := []struct {
		name   string
		ts     time.Time
		mutate func(*http.Request)
		status int
	}{
		{"bad signature", time.Now(), func(r *http.Request) { r.Header.Set(headerSignature, strings.Repeat("0", 64)) }, 401},
		{"missing signature", time.Now(), func(r *http.Request) { r.Header.Del(headerSignature) }, 401},
		{"stale timestamp", time.Now().Add(-10 * time.Minute), nil, 401},
		{"future timestamp", time.Now().Add(10 * time.Minute), nil, 401},
		{"tampered nonce", time.Now(), func(r *http.Request) { r.Header.Set(headerNonce, "other") }, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := postWebhook(t, h.hook.URL, ev.json(), tc.ts, tc.mutate)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	// Unencrypted, oversized and wrongly-keyed bodies.
	post := func(body string) int {
		resp, err := http.Post(h.hook.URL+EventsPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(string(ev.json())); got != 400 {
		t.Errorf("plaintext event: %d", got)
	}
	if got := post(`{"encrypt":"` + strings.Repeat("A", 2<<20) + `"}`); got != 413 {
		t.Errorf("oversized event: %d", got)
	}
	if got := post(`{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}`); got != 400 {
		t.Errorf("wrong key: %d", got)
	}
	// Wrong verification token inside a correctly signed event.
	bad := strings.Replace(string(ev.json()), testVerify, "other-token", 1)
	if resp := postWebhook(t, h.hook.URL, []byte(bad), time.Now(), nil); resp.StatusCode != 401 {
		t.Errorf("bad token: %d", resp.StatusCode)
	}
	time.Sleep(100 * time.Millisecond)
	h.runner.mu.Lock()
	defer h.runner.mu.Unlock()
	if len(h.runner.turns) != 0 {
		t.Errorf("rejected requests reached the runner %d times", len(h.runner.turns))
	}
}

func TestWebhookChallenge(t *testing.T) {
	h := newHarness(t, nil, nil)
	ch := []byte(`{"challenge":"ajls384kdjx98XX","token":"` + testVerify + `","type":"url_verification"}`)
	resp := postWebhook(t, h.hook.URL, ch, time.Now(), func(r *http.Request) {
		r.Header.Del(headerSignature) // the challenge is unsigned
	})
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"challenge":"ajls384kdjx98XX"}` {
		t.Errorf("challenge: %d %s", resp.StatusCode, b)
	}
	wrong := []byte(`{"challenge":"x","token":"nope","type":"url_verification"}`)
	if resp := postWebhook(t, h.hook.URL, wrong, time.Now(), nil); resp.StatusCode != 401 {
		t.Errorf("challenge with wrong token: %d", resp.StatusCode)
	}
}

func TestSignatureAndDecryptionVectors(t *testing.T) {
	// PLATFORMS.md: Feishu doc sample and self-computed signature vector.
	plain, err := Decrypt("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", "test key")
	if err != nil || string(plain) != "hello world" {
		t.Fatalf("Decrypt = %q, %v", plain, err)
	}
	body := []byte(`{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}`)
	const want = "0c09d96c2aef2ad08179b3967ea410bbc91dab24ce3aec05af962cf1935844af"
	if got := Signature("1700000000", "abc", "test key", body); got != want {
		t.Fatalf("Signature = %s", got)
	}
	at := time.Unix(1700000000, 0).Add(90 * time.Second)
	if err := VerifySignature("1700000000", "abc", want, "test key", body, at, 5*time.Minute); err != nil {
		t.Errorf("valid vector rejected: %v", err)
	}
	if err := VerifySignature("1700000000", "abc", strings.ToUpper(want), "test key", body, at, 5*time.Minute); err != nil {
		t.Errorf("upper-case hex rejected: %v", err)
	}
	if err := VerifySignature("1700000000", "abc", want, "test key", body, at.Add(time.Hour), 5*time.Minute); !errors.Is(err, ErrStaleRequest) {
		t.Errorf("stale: %v", err)
	}
	if err := VerifySignature("1700000000", "abd", want, "test key", body, at, 5*time.Minute); !errors.Is(err, ErrBadSignature) {
		t.Errorf("wrong nonce: %v", err)
	}
	if _, err := Decrypt("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", "other key"); !errors.Is(err, ErrDecrypt) {
		t.Errorf("wrong key decrypted: %v", err)
	}
}

func TestOpenCapsDownloads(t *testing.T) {
	f := newFakeFeishu(t)
	a := newTestAdapter(t, f, func(c *Config) { c.MaxAttachmentBytes = 10000 })
	f.files["small"] = []byte(strings.Repeat("x", 10000))
	f.files["big"] = []byte(strings.Repeat("y", 10001))
	ctx := context.Background()
	for _, noLength := range []bool{false, true} {
		f.mu.Lock()
		f.noLength = noLength
		f.mu.Unlock()
		rc, err := a.Open(ctx, bot.Attachment{ID: "small", Name: "s.log", MessageID: "om_1"})
		if err != nil {
			t.Fatalf("open small (noLength=%v): %v", noLength, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || len(b) != 10000 {
			t.Errorf("small (noLength=%v): %d bytes, %v", noLength, len(b), err)
		}
		rc, err = a.Open(ctx, bot.Attachment{ID: "big", Name: "b.log", MessageID: "om_1"})
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if !errors.Is(err, bot.ErrTooLarge) {
			t.Errorf("big (noLength=%v): %v, want ErrTooLarge", noLength, err)
		}
	}
	_, err := a.Open(ctx, bot.Attachment{ID: "missing", Name: "m.log", MessageID: "om_1"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 234003 || ae.LogID != "logid-missing" {
		t.Errorf("missing file: %v", err)
	}
	if _, err := a.Open(ctx, bot.Attachment{ID: "big", Name: "b.log", MessageID: "om_1", Size: 1 << 30}); !errors.Is(err, bot.ErrTooLarge) {
		t.Errorf("declared size over cap: %v", err)
	}
}

func TestBusinessErrorsAndTokenRefresh(t *testing.T) {
	f := newFakeFeishu(t)
	a := newTestAdapter(t, f, nil)
	ctx := context.Background()
	f.failReplies = 1
	_, err := a.Post(ctx, bot.Conversation{Platform: bot.PlatformFeishu, Channel: "oc", ReplyTo: "om_1"}, bot.Reply{Text: "x"})
	var ae *APIError
	if !errors.As(err, &ae) || !errors.Is(err, ErrAPI) || ae.Code != 230002 || ae.LogID != "20260101-logid" || ae.Op != "im.message.reply" {
		t.Fatalf("business error = %v", err)
	}
	// An expired token is refreshed once, transparently.
	f.expireOnce = true
	id, err := a.Post(ctx, bot.Conversation{Platform: bot.PlatformFeishu, Channel: "oc", ReplyTo: "om_1"}, bot.Reply{Text: "x"})
	if err != nil || id == "" {
		t.Fatalf("post after token expiry: %q, %v", id, err)
	}
	if f.tokenCalls != 2 {
		t.Errorf("token fetched %d times, want 2", f.tokenCalls)
	}
	// Same reply again: the uuid makes it idempotent.
	id2, err := a.Post(ctx, bot.Conversation{Platform: bot.PlatformFeishu, Channel: "oc", ReplyTo: "om_1"}, bot.Reply{Text: "x"})
	if err != nil || id2 != id {
		t.Errorf("repeated post: %q vs %q, %v", id2, id, err)
	}
	// A scheduled digest goes to the chat as a new message, report attached.
	id3, err := a.Post(ctx, bot.Conversation{Platform: bot.PlatformFeishu, Channel: "oc_digest"}, bot.Reply{Text: "daily digest", Report: "# full report", ReportName: "digest.md"})
	if err != nil {
		t.Fatal(err)
	}
	sends, _ := f.snapshot()
	last := sends[len(sends)-1]
	if sends[len(sends)-2].Chat != "oc_digest" || sends[len(sends)-2].ID != id3 || last.MsgType != "file" || last.ReplyTo != id3 {
		t.Errorf("digest sends = %+v", sends)
	}
	if len(f.uploads) != 1 || f.uploads[0] != "digest.md:# full report" {
		t.Errorf("uploads = %v", f.uploads)
	}
}

func TestFinishFallsBackToReplyWhenNoPlaceholder(t *testing.T) {
	f := newFakeFeishu(t)
	a := newTestAdapter(t, f, func(c *Config) { c.Reaction = "-" })
	ctx := context.Background()
	f.failReplies = 1 // the progress card fails
	m := bot.Message{Platform: bot.PlatformFeishu, Channel: "oc", ID: "om_q", Thread: "om_q"}
	p := a.StartProgress(ctx, m)
	p.Update(ctx, "step 1")
	id, err := p.Finish(ctx, bot.Reply{Text: "done"})
	if err != nil || id == "" {
		t.Fatalf("finish: %q %v", id, err)
	}
	sends, patches := f.snapshot()
	if len(sends) != 1 || sends[0].UUID != idempotencyKey("om_q", "answer") || len(patches) != 0 {
		t.Errorf("sends %+v patches %v", sends, patches)
	}
	if len(f.reactions) != 0 {
		t.Errorf("reaction sent although disabled")
	}
}

func TestChatLimiter(t *testing.T) {
	l := newChatLimiter(20, time.Now)
	ctx := context.Background()
	start := time.Now()
	for range 25 {
		if err := l.Wait(ctx, "oc_busy"); err != nil {
			t.Fatal(err)
		}
	}
	busy := time.Since(start)
	start = time.Now()
	if err := l.Wait(ctx, "oc_quiet"); err != nil {
		t.Fatal(err)
	}
	quiet := time.Since(start)
	// 20 burst + 5 more at 20/s = 250 ms.
	if busy < 200*time.Millisecond || busy > 2*time.Second {
		t.Errorf("25 sends to one chat took %v, want about 250ms", busy)
	}
	if quiet > 50*time.Millisecond {
		t.Errorf("another chat waited %v", quiet)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for range 30 {
		if err := l.Wait(cctx, "oc_busy"); err != nil {
			return
		}
	}
	t.Error("cancelled wait never failed")
}
