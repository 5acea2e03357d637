package slack

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

type nopInbox struct{}

func (nopInbox) Deliver(context.Context, bot.Message) error { return nil }

// BenchmarkServeEvents measures the HTTP ack path: read, verify, parse,
// normalise, hand off (to an inbox that does nothing).
func BenchmarkServeEvents(b *testing.B) {
	ad, err := New(Config{BotToken: testBotToken, SigningSecret: testSecret, BotUserID: "UBOT", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ad.inbox.Store(&inboxBox{in: nopInbox{}})
	body := callback("EvB", map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> why?", "ts": "1.0", "channel": "C1"})
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	sig := sign(testSecret, ts, body)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, EventsPath, bytes.NewReader(body))
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
		w := httptest.NewRecorder()
		ad.serveEvents(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkRenderReply(b *testing.B) {
	r := bot.Reply{Text: "**Checkout failed** because the gateway timed out.", NextSteps: []string{"a", "b"}}
	for i := 1; i <= 20; i++ {
		r.Evidence = append(r.Evidence, bot.Evidence{File: "app.log", Line: i * 100, Text: "10:02:01 ERROR payment gateway timeout after 30s", Verified: true})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = renderReply(r)
	}
}
