package slack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
)

// Slack's documented example (docs.slack.dev/authentication/verifying-requests-from-slack).
func TestSignatureSlackDocumentedVector(t *testing.T) {
	const (
		secret = "8f742231b10e8888abcd99yyyzzz85a5"
		ts     = "1531420618"
		body   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
		want   = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	)
	if got := sign(secret, ts, []byte(body)); got != want {
		t.Fatalf("sign = %s, want %s", got, want)
	}
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", want)
	sent := time.Unix(1531420618, 0)
	cases := []struct {
		name string
		now  time.Time
		body string
		sig  string
		want error
	}{
		{"valid", sent.Add(30 * time.Second), body, want, nil},
		{"at the window edge", sent.Add(5 * time.Minute), body, want, nil},
		{"stale", sent.Add(5*time.Minute + time.Second), body, want, ErrStaleRequest},
		{"from the future", sent.Add(-6 * time.Minute), body, want, ErrStaleRequest},
		{"tampered body", sent, body + "&x=1", want, ErrBadSignature},
		{"wrong signature", sent, body, "v0=" + strings.Repeat("0", 64), ErrBadSignature},
		{"missing signature", sent, body, "", ErrBadSignature},
	}
	for _, c := range cases {
		hh := h.Clone()
		if c.sig == "" {
			hh.Del("X-Slack-Signature")
		} else {
			hh.Set("X-Slack-Signature", c.sig)
		}
		err := verifySignature(secret, hh, []byte(c.body), c.now)
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		ok     bool
		errHas string
		http   bool
		maxAtt int64
	}{
		{"unset", map[string]string{}, false, "", false, 0},
		{"socket mode", map[string]string{EnvBotToken: "xoxb-1", EnvAppToken: "xapp-1"}, true, "", false, 0},
		{"http mode", map[string]string{EnvBotToken: "xoxb-1", EnvSigningSecret: "s"}, true, "", true, 0},
		{"both: http wins", map[string]string{EnvBotToken: "xoxb-1", EnvAppToken: "xapp-1", EnvSigningSecret: "s"}, true, "", true, 0},
		{"bot token only", map[string]string{EnvBotToken: "xoxb-1"}, true, EnvAppToken, false, 0},
		{"app token only", map[string]string{EnvAppToken: "xapp-1"}, true, EnvBotToken, false, 0},
		{"secret only", map[string]string{EnvSigningSecret: "s"}, true, EnvBotToken, false, 0},
		{"cap", map[string]string{EnvBotToken: "xoxb-1", EnvAppToken: "xapp-1", EnvMaxAttachMB: "50"}, true, "", false, 50 << 20},
		{"bad cap", map[string]string{EnvBotToken: "xoxb-1", EnvAppToken: "xapp-1", EnvMaxAttachMB: "lots"}, true, EnvMaxAttachMB, false, 0},
	}
	for _, c := range cases {
		cfg, ok, err := ConfigFromEnv(func(k string) string { return c.env[k] })
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.name, ok, c.ok)
		}
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) || !errors.Is(err, ErrConfig) {
				t.Errorf("%s: err = %v, want one naming %s", c.name, err, c.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !ok {
			continue
		}
		if cfg.HTTPMode() != c.http || cfg.MaxAttachmentBytes != c.maxAtt {
			t.Errorf("%s: http=%v max=%d", c.name, cfg.HTTPMode(), cfg.MaxAttachmentBytes)
		}
		if _, err := New(cfg); err != nil {
			t.Errorf("%s: New: %v", c.name, err)
		}
	}
	if _, err := New(Config{BotToken: "xoxp-user", AppToken: "xapp-1"}); err == nil {
		t.Error("New accepted a user token as the bot token")
	}
	if _, err := New(Config{BotToken: "xoxb-1"}); err == nil || !strings.Contains(err.Error(), EnvAppToken) {
		t.Errorf("New without app token or secret: %v", err)
	}
}

func TestNormaliseMessages(t *testing.T) {
	ad, err := New(Config{BotToken: "xoxb-1", SigningSecret: "s", BotUserID: "UBOT"})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		ignored       bool
		dm, mentioned bool
		thread, text  string
		files         int
	}
	cases := []struct {
		name string
		ev   slackevents.MessageEvent
		want want
	}{
		{"thread reply", slackevents.MessageEvent{User: "U1", Text: "and now?", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{thread: "1.0", text: "and now?"}},
		{"top-level channel chatter", slackevents.MessageEvent{User: "U1", Text: "lunch?", TimeStamp: "2.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"twin of a mention", slackevents.MessageEvent{User: "U1", Text: "<@UBOT> why?", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"mention of someone else in a thread", slackevents.MessageEvent{User: "U1", Text: "<@U2> look", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{thread: "1.0", text: "<@U2> look"}},
		{"DM", slackevents.MessageEvent{User: "U1", Text: "hi", TimeStamp: "2.0", Channel: "D1", ChannelType: "im"},
			want{dm: true, thread: "2.0", text: "hi"}},
		{"DM with mention", slackevents.MessageEvent{User: "U1", Text: "<@UBOT|sleuth> hi", TimeStamp: "2.0", Channel: "D1", ChannelType: "im"},
			want{dm: true, mentioned: true, thread: "2.0", text: "hi"}},
		{"DM with file", slackevents.MessageEvent{User: "U1", SubType: "file_share", Text: "look", TimeStamp: "2.0", Channel: "D1", ChannelType: "im",
			Message: &slack.Msg{Files: []slack.File{{ID: "F1", Name: "a.log", URLPrivateDownload: "https://files.slack.com/a.log"}}}},
			want{dm: true, thread: "2.0", text: "look", files: 1}},
		{"own message", slackevents.MessageEvent{User: "UBOT", Text: "answer", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"other bot", slackevents.MessageEvent{BotID: "B9", User: "U9", Text: "alert", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"bot_message subtype", slackevents.MessageEvent{SubType: "bot_message", Text: "x", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"edit", slackevents.MessageEvent{SubType: "message_changed", User: "U1", TimeStamp: "2.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
		{"join", slackevents.MessageEvent{SubType: "channel_join", User: "U1", TimeStamp: "2.0", ThreadTimeStamp: "1.0", Channel: "C1", ChannelType: "channel"},
			want{ignored: true}},
	}
	for _, c := range cases {
		ev := c.ev
		m, why := ad.fromMessage(&ev)
		if (why != "") != c.want.ignored {
			t.Errorf("%s: ignored=%v (%s), want %v", c.name, why != "", why, c.want.ignored)
			continue
		}
		if c.want.ignored {
			continue
		}
		if m.DM != c.want.dm || m.Mentioned != c.want.mentioned || m.Thread != c.want.thread || m.Text != c.want.text || len(m.Attachments) != c.want.files {
			t.Errorf("%s: got %+v", c.name, m)
		}
	}

	m, why := ad.fromMention(&slackevents.AppMentionEvent{User: "U1", Text: "<@UBOT>  why did it fail?\n```ERROR  x```", TimeStamp: "5.0", Channel: "C1",
		Files: []slack.File{{ID: "F1", Name: "app.log", Size: 12 << 20, FileAccess: "check_file_info", URLPrivateDownload: "https://files.slack.com/x"}}})
	if why != "" || m.Text != "why did it fail?\n```ERROR  x```" || m.Thread != "5.0" || !m.Mentioned {
		t.Errorf("mention: %q %+v", why, m)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].URL != "" || m.Attachments[0].Size != 12<<20 {
		t.Errorf("Slack Connect file should have no URL (files.info later): %+v", m.Attachments)
	}
	if got := placeholderText(m); got != "Reading app.log, 12 MiB…" {
		t.Errorf("placeholder = %q", got)
	}
	if _, why := ad.fromMention(&slackevents.AppMentionEvent{BotID: "B2", User: "U2", Text: "<@UBOT> hi", TimeStamp: "6.0", Channel: "C1"}); why == "" {
		t.Error("a bot's mention was not ignored")
	}
	if got := tsTime("1700000000.000100"); !got.Equal(time.Unix(1700000000, 100000).UTC()) {
		t.Errorf("tsTime = %v", got)
	}
}

// recordingInbox records deliveries into a shared order log.
type recordingInbox struct {
	order *[]string
	msgs  []bot.Message
}

func (r *recordingInbox) Deliver(_ context.Context, m bot.Message) error {
	*r.order = append(*r.order, "deliver "+m.ID)
	r.msgs = append(r.msgs, m)
	return nil
}

func TestSocketEnvelopeAckedBeforeWork(t *testing.T) {
	ad, err := New(Config{BotToken: "xoxb-1", AppToken: "xapp-1", BotUserID: "UBOT"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	in := &recordingInbox{order: &order}
	ack := func(req socketmode.Request, _ ...any) error {
		order = append(order, "ack "+req.EnvelopeID)
		return nil
	}
	body := callback("EvS", map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> hi", "ts": "9.0", "channel": "C1"})
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatal(err)
	}
	evt := socketmode.Event{Type: socketmode.EventTypeEventsAPI, Data: ev, Request: &socketmode.Request{Type: "events_api", EnvelopeID: "env-1", RetryAttempt: 1}}
	if err := ad.handleSocketEvent(context.Background(), evt, ack, in); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, ",") != "ack env-1,deliver 9.0" {
		t.Fatalf("order = %v, want the ack first", order)
	}
	if in.msgs[0].EventID != "EvS" || in.msgs[0].Tenant != "T1" || in.msgs[0].Text != "hi" {
		t.Errorf("delivered %+v", in.msgs[0])
	}
	// Events sleuth does not use are acked too, so Slack does not retry.
	order = nil
	_ = ad.handleSocketEvent(context.Background(), socketmode.Event{Type: socketmode.EventTypeSlashCommand, Request: &socketmode.Request{EnvelopeID: "env-2"}}, ack, in)
	if strings.Join(order, ",") != "ack env-2" {
		t.Errorf("slash command: order = %v", order)
	}
	if err := ad.handleSocketEvent(context.Background(), socketmode.Event{Type: socketmode.EventTypeInvalidAuth}, ack, in); !errors.Is(err, ErrConfig) {
		t.Errorf("invalid_auth: err = %v, want ErrConfig", err)
	}
}

func TestAssistantThreadStatusAndPrompts(t *testing.T) {
	fake := slacktest.New(t)
	ad, err := New(Config{BotToken: testBotToken, SigningSecret: "s", APIURL: fake.APIURL(), BotUserID: "UBOT", UpdateInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ad.runSide(ctx)
	in := &recordingInbox{order: new([]string)}

	started, _ := slackevents.ParseEvent(callback("EvA", map[string]any{"type": "assistant_thread_started", "assistant_thread": map[string]any{
		"user_id": "U1", "channel_id": "D1", "thread_ts": "100.0", "context": map[string]any{}}}), slackevents.OptionNoVerifyToken())
	ad.dispatch(ctx, in, started, 0)
	waitFor(t, "suggested prompts", func() bool { return len(fake.Calls("assistant.threads.setSuggestedPrompts")) == 1 })
	sp := fake.Calls("assistant.threads.setSuggestedPrompts")[0].Form
	if sp.Get("channel_id") != "D1" || sp.Get("thread_ts") != "100.0" || !strings.Contains(sp.Get("prompts"), "Why did this fail?") || !strings.Contains(sp.Get("prompts"), "What changed since the last run?") {
		t.Errorf("suggested prompts form = %v", sp)
	}

	msg := bot.Message{Platform: bot.PlatformSlack, Channel: "D1", Thread: "100.0", ID: "101.0", DM: true, User: "U1",
		Attachments: []bot.Attachment{{Name: "app.log", Size: 2 << 20}}}
	p := ad.StartProgress(ctx, msg)
	p.Update(ctx, "step 1/3: reading app.log")
	if _, err := p.Finish(ctx, bot.Reply{Text: "done"}); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, c := range fake.Calls("assistant.threads.setStatus") {
		if c.Form.Get("thread_ts") != "100.0" {
			t.Errorf("status on thread %q", c.Form.Get("thread_ts"))
		}
		statuses = append(statuses, c.Form.Get("status"))
	}
	if strings.Join(statuses, "|") != "is reading app.log, 2.0 MiB…|step 1/3: reading app.log|" {
		t.Errorf("statuses = %q", statuses)
	}
	post := fake.Calls("chat.postMessage")[0].Form
	if post.Get("thread_ts") != "100.0" {
		t.Errorf("assistant placeholder thread_ts = %q", post.Get("thread_ts"))
	}
	// A plain top-level DM is answered at top level, not in a thread.
	p = ad.StartProgress(ctx, bot.Message{Platform: bot.PlatformSlack, Channel: "D2", Thread: "200.0", ID: "200.0", DM: true, User: "U1"})
	if got := fake.Calls("chat.postMessage")[1].Form.Get("thread_ts"); got != "" {
		t.Errorf("top-level DM placeholder in thread %q", got)
	}
	if n := len(fake.Calls("assistant.threads.setStatus")); n != 3 {
		t.Errorf("a non-assistant DM set the assistant status (%d calls)", n)
	}
	_ = p
}
