package slack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
	"github.com/sleuth-bot/sleuth/memory"
)

const testSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// scriptedRunner stands in for the agent: it starts the session, reads
// every attachment through Turn.Open and cites the first line containing
// ERROR, the way the real agent answers with evidence.
type scriptedRunner struct {
	store *memory.SessionStore
	mu    sync.Mutex
	turns []bot.Turn
}

func (r *scriptedRunner) Run(ctx context.Context, t bot.Turn) (bot.Reply, error) {
	r.mu.Lock()
	r.turns = append(r.turns, t)
	r.mu.Unlock()
	m := t.Message
	if _, err := r.store.Ensure(ctx, memory.Session{Key: t.SessionKey, Platform: m.Platform, Tenant: m.Tenant, Channel: m.Channel, Thread: m.Thread, User: m.User}); err != nil {
		return bot.Reply{}, err
	}
	t.Progress("step 1/2: reading the log")
	var ev []bot.Evidence
	for _, a := range m.Attachments {
		rc, err := t.Open(ctx, a)
		if err != nil {
			return bot.Reply{Failed: true, Text: "I could not read " + a.Name + ": " + err.Error()}, nil
		}
		sc := bufio.NewScanner(rc)
		n := 0
		for sc.Scan() {
			n++
			if strings.Contains(sc.Text(), "ERROR") {
				ev = append(ev, bot.Evidence{File: a.Name, Line: n, Text: sc.Text(), Reason: "first error", Verified: true})
				break
			}
		}
		_, _ = io.Copy(io.Discard, rc)
		err = sc.Err()
		rc.Close()
		if err != nil {
			return bot.Reply{Failed: true, Text: "I could not read " + a.Name + ": " + err.Error()}, nil
		}
	}
	if len(ev) == 0 {
		return bot.Reply{Text: "You asked: " + m.Text}, nil
	}
	return bot.Reply{Text: "**Checkout failed** because the payment gateway timed out.", Evidence: ev, NextSteps: []string{"Check the gateway"}, Steps: 2}, nil
}

func (r *scriptedRunner) Turns() []bot.Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bot.Turn(nil), r.turns...)
}

// stack is one running sleuth: adapter in HTTP mode, router, store.
type stack struct {
	ad     *Adapter
	router *bot.Router
	runner *scriptedRunner
	srv    *httptest.Server
	stop   func()
}

func startStack(t *testing.T, fake *slacktest.Server, db *memory.DB, mutate func(*Config)) *stack {
	t.Helper()
	cfg := Config{
		BotToken:       testBotToken,
		SigningSecret:  testSecret,
		APIURL:         fake.APIURL(),
		UpdateInterval: -1,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ad, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runner := &scriptedRunner{store: db.Sessions()}
	router, err := bot.NewRouter(bot.RouterConfig{Runner: runner, Sessions: db.Sessions(), Logger: cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	router.Attach(ad)
	mux := http.NewServeMux()
	ad.Routes(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = router.Run(ctx) }()
	go func() { defer wg.Done(); _ = ad.Run(ctx, router) }()
	waitFor(t, "adapter running", func() bool { return ad.inbox.Load() != nil })
	st := &stack{ad: ad, router: router, runner: runner, srv: srv}
	var once sync.Once
	st.stop = func() { once.Do(func() { cancel(); wg.Wait(); srv.Close() }) }
	t.Cleanup(st.stop)
	return st
}

// postEvent sends a signed Events API request and returns the status.
func postEvent(t *testing.T, url string, body []byte, ts time.Time, retry int, secret string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+EventsPath, bytes.NewReader(body))
	sts := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", sts)
	req.Header.Set("X-Slack-Signature", sign(secret, sts, body))
	req.Header.Set("Content-Type", "application/json")
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// callback wraps an inner event the way Slack's Events API does.
func callback(eventID string, inner map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"token": "ignored", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": 1700000000, "event": inner,
		"authorizations": []map[string]any{{"team_id": "T1", "user_id": "UBOT", "is_bot": true}},
	})
	return b
}

func mentionWithFile(fake *slacktest.Server, ts string, size int) map[string]any {
	return map[string]any{
		"type": "app_mention", "user": "U_ALICE", "text": "<@UBOT> why did checkout fail at 10:02?",
		"ts": ts, "channel": "C_OPS", "event_ts": ts,
		"files": []map[string]any{{
			"id": "F_LOG", "name": "app.log", "mimetype": "text/plain", "size": size,
			"url_private_download": fake.URL + "/files/app.log",
		}},
	}
}

func TestMentionWithFileThreadFollowUpRetryAndRestart(t *testing.T) {
	fake := slacktest.New(t)
	logBody := "10:01:59 INFO start\n10:02:00 INFO cart ok\n10:02:01 ERROR payment gateway timeout after 30s\n10:02:02 INFO done\n"
	fake.AddFile("/files/app.log", []byte(logBody))
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := startStack(t, fake, db, nil)
	now := time.Now()

	// 1. A mention with a file: 👀, placeholder, answer with evidence, ✅.
	mention := callback("Ev1", mentionWithFile(fake, "1700000000.000100", len(logBody)))
	if code := postEvent(t, st.srv.URL, mention, now, 0, testSecret); code != http.StatusOK {
		t.Fatalf("mention: status %d", code)
	}
	waitFor(t, "✅ reaction", func() bool { return hasReaction(fake, "white_check_mark") })

	adds := fake.Calls("reactions.add")
	if adds[0].Form.Get("name") != "eyes" || adds[0].Form.Get("timestamp") != "1700000000.000100" {
		t.Errorf("first reaction = %v, want eyes on the mention", adds[0].Form)
	}
	posts := fake.Calls("chat.postMessage")
	if len(posts) != 1 {
		t.Fatalf("chat.postMessage calls = %d, want 1 (the placeholder)", len(posts))
	}
	if got := posts[0].Form.Get("thread_ts"); got != "1700000000.000100" {
		t.Errorf("placeholder thread_ts = %q, want the mention's ts", got)
	}
	if got := posts[0].Form.Get("text"); !strings.HasPrefix(got, "Reading app.log, ") {
		t.Errorf("placeholder text = %q, want Reading app.log, <size>…", got)
	}
	downloads := fake.Calls("GET /files/app.log")
	if len(downloads) != 1 || downloads[0].Auth != "Bearer "+testBotToken {
		t.Fatalf("downloads = %+v, want one with the bot token", downloads)
	}
	updates := fake.Calls("chat.update")
	final := updates[len(updates)-1]
	if final.Form.Get("ts") != "1700000100.000001" {
		t.Errorf("answer replaced ts %q, want the placeholder", final.Form.Get("ts"))
	}
	blocks := final.Form.Get("blocks")
	if !strings.Contains(blocks, "3 | 10:02:01 ERROR payment gateway timeout after 30s") || !strings.Contains(blocks, "```") {
		t.Errorf("answer blocks lack the evidence line as code with its number:\n%s", blocks)
	}
	if !strings.Contains(blocks, "*Checkout failed*") {
		t.Errorf("answer blocks lack the mrkdwn answer:\n%s", blocks)
	}
	turns := st.runner.Turns()
	if len(turns) != 1 {
		t.Fatalf("turns = %d, want 1", len(turns))
	}
	m := turns[0].Message
	if m.Text != "why did checkout fail at 10:02?" || !m.Mentioned || m.Tenant != "T1" || m.Thread != m.ID || m.EventID != "Ev1" {
		t.Errorf("normalised message = %+v", m)
	}
	firstKey := turns[0].SessionKey

	// 2. The same message as a `message` event (the twin) is not answered.
	twin := callback("Ev1-twin", map[string]any{
		"type": "message", "subtype": "file_share", "user": "U_ALICE", "text": "<@UBOT> why did checkout fail at 10:02?",
		"ts": "1700000000.000100", "channel": "C_OPS", "channel_type": "channel", "event_ts": "1700000000.000100",
	})
	postEvent(t, st.srv.URL, twin, now, 0, testSecret)

	// 3. Slack retries the mention (X-Slack-Retry-Num): one reply only.
	if code := postEvent(t, st.srv.URL, mention, now, 1, testSecret); code != http.StatusOK {
		t.Fatalf("retry: status %d", code)
	}

	// 4. A follow-up in the thread, no mention: same session.
	follow := callback("Ev2", map[string]any{
		"type": "message", "user": "U_BOB", "text": "and at 10:05?", "ts": "1700000200.000200",
		"thread_ts": "1700000000.000100", "channel": "C_OPS", "channel_type": "channel", "event_ts": "1700000200.000200",
	})
	postEvent(t, st.srv.URL, follow, now, 0, testSecret)
	waitFor(t, "second turn", func() bool { return len(st.runner.Turns()) >= 2 })
	waitFor(t, "second ✅", func() bool { return countReaction(fake, "white_check_mark") >= 2 })
	turns = st.runner.Turns()
	if len(turns) != 2 {
		t.Fatalf("turns = %d, want 2 (mention + follow-up; twin and retry dropped)", len(turns))
	}
	if turns[1].SessionKey != firstKey || turns[1].Message.Mentioned {
		t.Errorf("follow-up key %q (mentioned=%v), want %q", turns[1].SessionKey, turns[1].Message.Mentioned, firstKey)
	}

	// 5. Restart: a new router and adapter on the same store; Slack's
	// last retry of the first mention arrives. No second answer.
	st.stop()
	st2 := startStack(t, fake, db, nil)
	if code := postEvent(t, st2.srv.URL, mention, now, 3, testSecret); code != http.StatusOK {
		t.Fatalf("retry after restart: status %d", code)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(st2.runner.Turns()); n != 0 {
		t.Errorf("after restart the retried mention ran %d times, want 0", n)
	}
	if n := len(fake.Calls("chat.postMessage")); n != 2 {
		t.Errorf("chat.postMessage calls = %d, want 2 (one placeholder per answered message)", n)
	}
}

func hasReaction(f *slacktest.Server, name string) bool { return countReaction(f, name) > 0 }

func countReaction(f *slacktest.Server, name string) int {
	n := 0
	for _, c := range f.Calls("reactions.add") {
		if c.Form.Get("name") == name {
			n++
		}
	}
	return n
}

func TestForgedAndStaleSignaturesGet401AndNoWork(t *testing.T) {
	fake := slacktest.New(t)
	fake.AddFile("/files/app.log", []byte("ERROR x\n"))
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := startStack(t, fake, db, nil)
	before := len(fake.AllCalls())
	body := callback("EvF", mentionWithFile(fake, "1700000000.000300", 8))

	cases := []struct {
		name string
		do   func() int
	}{
		{"wrong secret", func() int { return postEvent(t, st.srv.URL, body, time.Now(), 0, "not-the-secret") }},
		{"stale timestamp", func() int { return postEvent(t, st.srv.URL, body, time.Now().Add(-6*time.Minute), 0, testSecret) }},
		{"future timestamp", func() int { return postEvent(t, st.srv.URL, body, time.Now().Add(6*time.Minute), 0, testSecret) }},
		{"no signature", func() int {
			resp, err := http.Post(st.srv.URL+EventsPath, "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}},
		{"body changed after signing", func() int {
			req, _ := http.NewRequest(http.MethodPost, st.srv.URL+EventsPath, bytes.NewReader(append(body, ' ')))
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			req.Header.Set("X-Slack-Request-Timestamp", ts)
			req.Header.Set("X-Slack-Signature", sign(testSecret, ts, body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}},
	}
	for _, c := range cases {
		if code := c.do(); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", c.name, code)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(st.runner.Turns()); n != 0 {
		t.Errorf("forged requests ran %d turns", n)
	}
	if after := len(fake.AllCalls()); after != before {
		t.Errorf("forged requests made %d Slack calls", after-before)
	}
	// The same body, correctly signed and fresh, is accepted: the 401s were
	// about the signatures, not the payload.
	if code := postEvent(t, st.srv.URL, body, time.Now(), 0, testSecret); code != http.StatusOK {
		t.Fatalf("genuine request: status %d", code)
	}
	waitFor(t, "genuine turn", func() bool { return len(st.runner.Turns()) == 1 })
}

func TestURLVerificationAndBodyLimit(t *testing.T) {
	fake := slacktest.New(t)
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := startStack(t, fake, db, nil)

	body := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	req, _ := http.NewRequest(http.MethodPost, st.srv.URL+EventsPath, bytes.NewReader(body))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sign(testSecret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || got["challenge"] != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("url_verification: %d %v", resp.StatusCode, got)
	}

	big := bytes.Repeat([]byte("x"), maxEventBody+1)
	if code := postEvent(t, st.srv.URL, big, time.Now(), 0, testSecret); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d, want 413", code)
	}
}

func TestFileOverCapGetsClearReply(t *testing.T) {
	fake := slacktest.New(t)
	logBody := strings.Repeat("INFO filler line\n", 200) + "ERROR late\n"
	fake.AddFile("/files/app.log", []byte(logBody))
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := startStack(t, fake, db, func(c *Config) { c.MaxAttachmentBytes = 1024 })

	// Size unknown in the event (0), so the cap bites while streaming.
	postEvent(t, st.srv.URL, callback("EvBig", mentionWithFile(fake, "1700000000.000400", 0)), time.Now(), 0, testSecret)
	waitFor(t, "❌ reaction", func() bool { return hasReaction(fake, "x") })
	updates := fake.Calls("chat.update")
	final := updates[len(updates)-1].Form.Get("text")
	if !strings.Contains(final, bot.ErrTooLarge.Error()) || !strings.Contains(final, "app.log") {
		t.Errorf("reply %q does not say the file is too large", final)
	}
	if hasReaction(fake, "white_check_mark") {
		t.Error("a failed read got ✅")
	}
}

func TestOpen(t *testing.T) {
	fake := slacktest.New(t)
	fake.AddFile("/files/small.log", []byte("hello\n"))
	fake.AddFile("/files/big.log", bytes.Repeat([]byte("a"), 4096))
	fake.SetFileInfo("F_CONNECT", map[string]any{"id": "F_CONNECT", "name": "small.log", "size": 6, "url_private_download": fake.URL + "/files/small.log"})
	fake.SetFileInfo("F_HUGE", map[string]any{"id": "F_HUGE", "name": "huge.log", "size": 1 << 30, "url_private_download": fake.URL + "/files/big.log"})
	ad, err := New(Config{BotToken: testBotToken, SigningSecret: "s", APIURL: fake.APIURL(), MaxAttachmentBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func(a bot.Attachment) (string, error) {
		rc, err := ad.Open(ctx, a)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	u := fake.URL
	cases := []struct {
		name     string
		att      bot.Attachment
		want     string
		wantErr  error
		download bool // whether a GET may happen
	}{
		{"plain", bot.Attachment{Name: "small.log", URL: u + "/files/small.log"}, "hello\n", nil, true},
		{"slack connect via files.info", bot.Attachment{ID: "F_CONNECT", Name: "small.log"}, "hello\n", nil, true},
		{"declared size over cap", bot.Attachment{Name: "big.log", Size: 4096, URL: u + "/files/big.log"}, "", bot.ErrTooLarge, false},
		{"files.info size over cap", bot.Attachment{ID: "F_HUGE", Name: "huge.log"}, "", bot.ErrTooLarge, false},
		{"content-length over cap", bot.Attachment{Name: "big.log", URL: u + "/files/big.log"}, "", bot.ErrTooLarge, true},
		{"streamed over cap", bot.Attachment{Name: "big.log", URL: u + "/files/big.log?chunked=1"}, "", bot.ErrTooLarge, true},
		{"deleted file", bot.Attachment{ID: "F_GONE", Name: "gone.log"}, "", ErrFileGone, false},
		{"expired url", bot.Attachment{Name: "old.log", URL: u + "/files/old.log"}, "", ErrFileGone, true},
		{"foreign host", bot.Attachment{Name: "x.log", URL: "https://evil.example.com/files/x.log"}, "", ErrFileAccess, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(fake.AllCalls())
			got, err := read(c.att)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.att.Name) {
					t.Errorf("error %q does not name the file", err)
				}
			} else if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
			if !c.download {
				for _, call := range fake.AllCalls()[before:] {
					if strings.HasPrefix(call.Method, "GET ") {
						t.Errorf("downloaded %s although it should not", call.Method)
					}
				}
			}
		})
	}

	// A token Slack does not accept for the file: sign-in redirect.
	bad, _ := New(Config{BotToken: "xoxb-other", SigningSecret: "s", APIURL: fake.APIURL()})
	_, err = bad.Open(ctx, bot.Attachment{Name: "small.log", URL: u + "/files/small.log"})
	if !errors.Is(err, ErrFileAccess) {
		t.Errorf("sign-in redirect: err = %v, want ErrFileAccess", err)
	}
}

func TestRateLimitedCallsWaitForRetryAfter(t *testing.T) {
	fake := slacktest.New(t)
	fake.RateLimit("chat.postMessage", 1)
	ad, err := New(Config{BotToken: testBotToken, SigningSecret: "s", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ts, err := ad.Post(context.Background(), bot.Conversation{Channel: "C1", Thread: "1.0"}, bot.Reply{Text: "hi"})
	if err != nil || ts == "" {
		t.Fatalf("Post after one 429: %q, %v", ts, err)
	}
	calls := fake.Calls("chat.postMessage")
	if len(calls) != 2 {
		t.Fatalf("chat.postMessage calls = %d, want 2", len(calls))
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, want the 1 s Retry-After", gap)
	}
	_ = start

	// A Retry-After beyond MaxRetryWait fails instead of holding a worker.
	fake.RateLimit("chat.postMessage", 1)
	short, _ := New(Config{BotToken: testBotToken, SigningSecret: "s", APIURL: fake.APIURL(), MaxRetryWait: 100 * time.Millisecond})
	if _, err := short.Post(context.Background(), bot.Conversation{Channel: "C1"}, bot.Reply{Text: "hi"}); err == nil {
		t.Error("Post with Retry-After over MaxRetryWait succeeded")
	}
}

func TestPostUploadsLongReportIntoThread(t *testing.T) {
	fake := slacktest.New(t)
	ad, err := New(Config{BotToken: testBotToken, SigningSecret: "s", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Repeat("line of the long report\n", 400)
	ts, err := ad.Post(context.Background(), bot.Conversation{Channel: "C1", Thread: "1700000000.000100"},
		bot.Reply{Text: "Summary", Report: report, ReportName: "../checkout-report.md"})
	if err != nil || ts == "" {
		t.Fatal(ts, err)
	}
	get := fake.Calls("files.getUploadURLExternal")
	done := fake.Calls("files.completeUploadExternal")
	if len(get) != 1 || len(done) != 1 {
		t.Fatalf("upload flow calls: get=%d complete=%d, want 1 and 1", len(get), len(done))
	}
	if get[0].Form.Get("filename") != "checkout-report.md" || get[0].Form.Get("length") != fmt.Sprint(len(report)) {
		t.Errorf("getUploadURLExternal form = %v", get[0].Form)
	}
	if done[0].Form.Get("channel_id") != "C1" || done[0].Form.Get("thread_ts") != "1700000000.000100" {
		t.Errorf("completeUploadExternal form = %v, want the thread", done[0].Form)
	}
	if got := fake.Uploads()["F_UP1"]; got != report {
		t.Errorf("uploaded %d bytes, want the %d-byte report", len(got), len(report))
	}
}

func TestTenantBeforeRunAsksAuthTest(t *testing.T) {
	fake := slacktest.New(t)
	a, err := New(Config{BotToken: slacktest.BotToken, SigningSecret: testSecret, APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Tenant(); got != slacktest.TeamID {
		t.Fatalf("Tenant() before Run = %q, want %q", got, slacktest.TeamID)
	}
	if n := len(fake.Calls("auth.test")); n != 1 {
		t.Fatalf("auth.test called %d times, want 1", n)
	}
	a.Tenant() // cached
	if n := len(fake.Calls("auth.test")); n != 1 {
		t.Fatalf("auth.test called %d times after caching, want 1", n)
	}
}
