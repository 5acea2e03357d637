// Package feishu is sleuth's Feishu/Lark adapter: events over the long
// connection (oapi-sdk-go's ws client, the default) or a secured webhook,
// normalised to bot.Message; replies as JSON 2.0 message cards in the
// thread, a progress card patched in place, streaming size-capped file
// downloads, idempotent sends and a per-chat rate limit.
package feishu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	lark "github.com/larksuite/oapi-sdk-go/v3"
	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	"github.com/larksuite/oapi-sdk-go/v3/event/dispatcher"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"

	"github.com/sleuth-bot/sleuth/bot"
)

// Adapter is the Feishu/Lark platform. It implements bot.Adapter; all
// methods are safe for concurrent use. Delivery is at-least-once from the
// platform; the adapter drops the duplicates it sees in memory and the
// router drops the rest (persisted), and every send carries an idempotency
// uuid derived from the inbound message, so a retried send never posts
// twice.
type Adapter struct {
	cfg   Config
	api   *apiClient
	log   *slog.Logger
	files fileCache
	seen  *seenSet

	mu    sync.Mutex
	inbox bot.Inbox // set while Run runs
	botID string
}

var _ bot.Adapter = (*Adapter)(nil)

// New validates cfg and returns an adapter. It makes no network calls;
// Run fetches the bot's identity.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Adapter{
		cfg:   cfg,
		log:   cfg.Logger.With("platform", bot.PlatformFeishu),
		seen:  newSeenSet(),
		botID: cfg.BotOpenID,
	}
	a.api = &apiClient{
		base: cfg.BaseURL, appID: cfg.AppID, secret: cfg.AppSecret,
		hc: cfg.HTTPClient, log: a.log, now: cfg.Now,
		limit: newChatLimiter(cfg.ChatQPS, cfg.Now),
	}
	return a, nil
}

// Platform returns bot.PlatformFeishu (Lark included: same API).
func (a *Adapter) Platform() string { return bot.PlatformFeishu }

func (a *Adapter) inboxAndBot() (bot.Inbox, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inbox, a.botID
}

// Run fetches the bot's open_id (bot/v3/info) when not configured, then
// receives events until ctx is done. In webhook mode the events arrive
// through Routes' handler and Run only waits. In long-connection mode it
// runs the SDK's ws client, which reconnects by itself; Run returns an
// error when the client gives up (bad credentials) and nil on ctx done.
//
// The SDK's Client.Start never returns after a successful connect, so its
// goroutine outlives Run (it is idle after Close); this is a known SDK
// limitation.
func (a *Adapter) Run(ctx context.Context, in bot.Inbox) error {
	if in == nil {
		return fmt.Errorf("%w: nil inbox", ErrConfig)
	}
	a.mu.Lock()
	id := a.botID
	a.mu.Unlock()
	if id == "" {
		var err error
		if id, err = a.api.botOpenID(ctx); err != nil {
			return fmt.Errorf("feishu: fetch bot identity: %w", err)
		}
	}
	a.mu.Lock()
	a.botID, a.inbox = id, in
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.inbox = nil
		a.mu.Unlock()
	}()
	a.log.Info("feishu adapter started", "mode", a.cfg.Mode, "domain", a.cfg.Domain)

	if a.cfg.Mode == ModeWebhook {
		<-ctx.Done()
		return nil
	}
	d := dispatcher.NewEventDispatcher("", "").
		OnP2MessageReceiveV1(func(ctx context.Context, ev *larkim.P2MessageReceiveV1) error {
			if ev == nil || ev.Event == nil || ev.Event.Message == nil {
				return nil
			}
			return a.handleEvent(ctx, ev)
		})
	cli := larkws.NewClient(a.cfg.AppID, a.cfg.AppSecret,
		larkws.WithEventHandler(d),
		larkws.WithDomain(a.wsDomain()),
		larkws.WithLogger(sdkLogger{a.log}),
		larkws.WithLogLevel(larkcore.LogLevelInfo),
	)
	errc := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("feishu long connection panicked: %v", p)
			}
		}()
		errc <- cli.Start(ctx)
	}()
	select {
	case <-ctx.Done():
		cli.Close()
		return nil
	case err := <-errc:
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("feishu long connection: %w", err)
	}
}

// wsDomain is the long-connection domain: the configured base URL (Lark's
// when FEISHU_DOMAIN=lark, or FEISHU_BASE_URL).
func (a *Adapter) wsDomain() string {
	switch a.cfg.BaseURL {
	case FeishuBaseURL:
		return lark.FeishuBaseUrl
	case LarkBaseURL:
		return lark.LarkBaseUrl
	}
	return a.cfg.BaseURL
}

// idempotencyKey derives the uuid of a send from the inbound message and
// the purpose of the send ("progress", "answer", …). Feishu accepts one
// send per uuid per hour, so a retried or re-run send posts once.
func idempotencyKey(messageID, purpose string) string {
	h := sha256.Sum256([]byte("sleuth/feishu/" + messageID + "/" + purpose))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// Post sends r to a conversation as a card and returns the message id.
// With ReplyTo (or Thread) set it replies in that thread; otherwise it
// posts a new message to the chat (scheduled digests). A long Report is
// uploaded as a file in the same thread.
func (a *Adapter) Post(ctx context.Context, to bot.Conversation, r bot.Reply) (string, error) {
	if to.Channel == "" {
		return "", fmt.Errorf("feishu post: %w: empty channel", ErrConfig)
	}
	content := renderCard(r)
	anchor := to.ReplyTo
	if anchor == "" {
		anchor = to.Thread
	}
	var sent sentMessage
	var err error
	if anchor != "" {
		sent, err = a.api.reply(ctx, to.Channel, anchor, "interactive", content, idempotencyKey(anchor, "post/"+digest(content)))
	} else {
		sent, err = a.api.send(ctx, to.Channel, "interactive", content, idempotencyKey(to.Channel, "post/"+digest(content)))
	}
	if err != nil {
		return "", fmt.Errorf("feishu post: %w", err)
	}
	a.attachReport(ctx, to.Channel, sent.MessageID, r)
	return sent.MessageID, nil
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// attachReport uploads r.Report as a file replying to messageID. Best
// effort: the card already carries the conclusion.
func (a *Adapter) attachReport(ctx context.Context, chat, messageID string, r bot.Reply) {
	if strings.TrimSpace(r.Report) == "" || messageID == "" {
		return
	}
	name := r.ReportName
	if name == "" {
		name = "sleuth-report.md"
	}
	key, err := a.api.uploadFile(ctx, name, []byte(r.Report))
	if err == nil {
		content, _ := json.Marshal(map[string]string{"file_key": key})
		_, err = a.api.reply(ctx, chat, messageID, "file", string(content), idempotencyKey(messageID, "report"))
	}
	if err != nil {
		a.log.Warn("feishu report upload failed", "message_id", messageID, "error", err)
	}
}

// Open streams an attachment with im.v1.messageResource.get. Reading more
// than the configured cap fails with bot.ErrTooLarge (at once when the
// response announces its length).
func (a *Adapter) Open(ctx context.Context, at bot.Attachment) (io.ReadCloser, error) {
	if at.MessageID == "" || at.ID == "" {
		return nil, fmt.Errorf("feishu open %q: attachment has no message id or file key", at.Name)
	}
	if at.Size > a.cfg.MaxAttachmentBytes {
		return nil, fmt.Errorf("feishu open %q: %w", at.Name, bot.ErrTooLarge)
	}
	typ := "file"
	if strings.HasPrefix(at.MIME, "image/") {
		typ = "image"
	}
	rc, err := a.api.download(ctx, at.MessageID, at.ID, typ, a.cfg.MaxAttachmentBytes)
	if err != nil {
		return nil, fmt.Errorf("feishu open %q: %w", at.Name, err)
	}
	return rc, nil
}

// Minimum spacing of progress patches of one card; Feishu allows 5 QPS per
// message, and a status line changing faster is unreadable anyway.
const minProgressGap = time.Second

// StartProgress marks m (reaction, best effort) and replies in its thread
// with a progress card that Update patches and Finish replaces with the
// answer.
func (a *Adapter) StartProgress(ctx context.Context, m bot.Message) bot.Progress {
	p := &progress{a: a, m: m}
	if a.cfg.Reaction != "-" {
		if err := a.api.react(ctx, m.Channel, m.ID, a.cfg.Reaction); err != nil {
			a.log.Debug("feishu reaction failed", "message_id", m.ID, "error", err)
		}
	}
	sent, err := a.api.reply(ctx, m.Channel, m.ID, "interactive", progressCard("Looking into it…"), idempotencyKey(m.ID, "progress"))
	if err != nil {
		a.log.Warn("feishu progress card failed", "message_id", m.ID, "error", err)
	} else {
		p.cardID = sent.MessageID
	}
	return p
}

// progress is safe for concurrent use; patches of one card are
// serialised so they land in order.
type progress struct {
	a *Adapter
	m bot.Message

	mu     sync.Mutex
	cardID string
	last   time.Time
	done   bool
}

// Update patches the progress card, at most once per minProgressGap.
func (p *progress) Update(ctx context.Context, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cardID == "" || p.done {
		return
	}
	now := p.a.cfg.Now()
	if now.Sub(p.last) < minProgressGap {
		return
	}
	p.last = now
	if err := p.a.api.patch(ctx, p.m.Channel, p.cardID, progressCard(text)); err != nil {
		p.a.log.Debug("feishu progress update failed", "message_id", p.cardID, "error", err)
	}
}

// Finish replaces the progress card with the answer card. When there is no
// progress card or the patch fails, it replies in the thread instead (with
// the same idempotency key on every attempt).
func (p *progress) Finish(ctx context.Context, r bot.Reply) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	content := renderCard(r)
	id := p.cardID
	if id != "" {
		if err := p.a.api.patch(ctx, p.m.Channel, id, content); err != nil {
			p.a.log.Warn("feishu answer patch failed, replying instead", "message_id", id, "error", err)
			id = ""
		}
	}
	if id == "" {
		sent, err := p.a.api.reply(ctx, p.m.Channel, p.m.ID, "interactive", content, idempotencyKey(p.m.ID, "answer"))
		if err != nil {
			return "", fmt.Errorf("feishu answer: %w", err)
		}
		id = sent.MessageID
	}
	p.a.attachReport(ctx, p.m.Channel, id, r)
	return id, nil
}

// sdkLogger routes the SDK's logs to slog.
type sdkLogger struct{ l *slog.Logger }

// Debug is dropped: the SDK's debug lines carry event payloads (message
// text), which sleuth never logs.
func (s sdkLogger) Debug(context.Context, ...any)       {}
func (s sdkLogger) Info(ctx context.Context, v ...any)  { s.l.InfoContext(ctx, fmt.Sprint(v...)) }
func (s sdkLogger) Warn(ctx context.Context, v ...any)  { s.l.WarnContext(ctx, fmt.Sprint(v...)) }
func (s sdkLogger) Error(ctx context.Context, v ...any) { s.l.ErrorContext(ctx, fmt.Sprint(v...)) }
