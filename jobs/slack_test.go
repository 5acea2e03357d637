package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/slack"
	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
)

// nopInbox drops events: these tests only post.
type nopInbox struct{}

func (nopInbox) Deliver(context.Context, bot.Message) error { return nil }

// slackAdapter runs the real Slack adapter (HTTP Events mode, so no
// WebSocket) against the fake Web API until the test ends, and waits for
// auth.test to have told it the workspace.
func slackAdapter(t *testing.T, fake *slacktest.Server) *slack.Adapter {
	t.Helper()
	ad, err := slack.New(slack.Config{BotToken: slacktest.BotToken, SigningSecret: "test-secret", APIURL: fake.APIURL(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, nopInbox{}) }() // owner: this test; exits on cancel.
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("adapter Run: %v", err)
		}
	})
	eventually(t, "auth.test", func() bool { return ad.Tenant() == slacktest.TeamID })
	return ad
}

func TestDigestThroughSlackAdapterSeedsThread(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	ctx := context.Background()
	st := db.Sessions()
	seedThread(t, st, bot.Message{Platform: bot.PlatformSlack, Tenant: slacktest.TeamID, Channel: "C1", ID: "1699990000.000100", Thread: "1699990000.000100"}, "fp-pool")
	fake := slacktest.New(t)
	ad := slackAdapter(t, fake)
	s := startDigest(t, clk, db, bot.PlatformSlack, ad, "slack:C1")
	clk.Advance(time.Minute) // 09:00
	eventually(t, "chat.postMessage", func() bool { return len(fake.Calls("chat.postMessage")) == 1 })
	post := fake.Calls("chat.postMessage")[0]
	if post.Form.Get("channel") != "C1" || post.Form.Get("thread_ts") != "" || post.Form.Get("token") != slacktest.BotToken {
		t.Errorf("chat.postMessage form = %v; want a new message in C1 with the bot token", post.Form)
	}
	if !strings.Contains(post.Form.Get("text")+post.Form.Get("blocks"), "fp-pool") {
		t.Errorf("posted digest does not mention the analysed thread: %v", post.Form)
	}
	const ts = "1700000100.000001" // the fake's first chat.postMessage ts
	var h []Run
	eventually(t, "the run record", func() bool {
		h, _ = s.History(ctx, "digest", 5)
		return len(h) == 1 && h[0].Status == StatusDelivered
	})
	if h[0].MessageID != ts || h[0].Attempts != 1 || !h[0].Scheduled.Equal(t0.Add(time.Minute)) {
		t.Errorf("run = %+v; want delivered on attempt 1 with message id %s", h[0], ts)
	}
	// The digest is a thread root keyed slack/<team>/<channel>/<ts>.
	thread := "slack/" + slacktest.TeamID + "/C1/" + ts
	if got := (bot.Message{Platform: bot.PlatformSlack, Tenant: ad.Tenant(), Channel: "C1", ID: ts, Thread: ts}).SessionKey(); got != thread {
		t.Fatalf("session key = %q; want %q", got, thread)
	}
	turns, err := st.Turns(ctx, thread, 0)
	if err != nil || len(turns) != 1 || turns[0].Role != "assistant" || turns[0].MessageID != ts || !strings.Contains(turns[0].Content, "fp-pool") {
		t.Fatalf("seeded turns of %s = %+v, %v", thread, turns, err)
	}
	if len(turns[0].Fingerprints) != 1 || turns[0].Fingerprints[0] != "fp-pool" {
		t.Errorf("seeded fingerprints = %v", turns[0].Fingerprints)
	}
}

func TestSlackOKFalseIsRetriedThenNotDelivered(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	fake := slacktest.New(t)
	fake.Fail("chat.postMessage", "channel_not_found", -1)
	ad := slackAdapter(t, fake)
	sl := &sleeps{}
	s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Sessions: db.Sessions(), Skills: registry(t, &echo{}), Sleep: sl.Sleep, RetryBackoff: time.Second,
		Posters: map[string]Poster{bot.PlatformSlack: ad}, Defs: []Def{echoDef("@daily")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.RunNow(context.Background(), "echo-job")
	if err == nil || r.Status != StatusFailed || r.Attempts != DefaultMaxAttempts || r.MessageID != "" || !strings.Contains(r.Error, "channel_not_found") {
		t.Fatalf("run = %+v, %v; want failed after %d attempts with Slack's error", r, err, DefaultMaxAttempts)
	}
	if n := len(fake.Calls("chat.postMessage")); n != DefaultMaxAttempts {
		t.Errorf("chat.postMessage called %d times; want one per attempt (%d)", n, DefaultMaxAttempts)
	}
	if got := sl.all(); len(got) != DefaultMaxAttempts-1 || got[0] != time.Second {
		t.Errorf("backoff = %v; want %d waits starting at 1s", got, DefaultMaxAttempts-1)
	}
	h, _ := s.History(context.Background(), "echo-job", 1)
	if len(h) != 1 || h[0].Status != StatusFailed || h[0].MessageID != "" || h[0].Attempts != DefaultMaxAttempts {
		t.Errorf("recorded = %+v; want one failed run without a message id", h)
	}
	if ss, err := db.Sessions().ListSessions(context.Background(), bot.PlatformSlack, slacktest.TeamID, "C1", t0.Add(-48*time.Hour), t0.Add(48*time.Hour)); err != nil || len(ss) != 0 {
		t.Errorf("a failed post seeded sessions: %+v", ss)
	}
}
