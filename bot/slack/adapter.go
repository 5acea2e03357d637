// Package slack is sleuth's Slack adapter: it receives events over Socket
// Mode (default) or the HTTP Events API (signed requests), acknowledges each
// at once, normalises it into a bot.Message for the router, and renders
// replies as Block Kit in the message's thread, with a 👀 reaction, a
// placeholder updated in place and a ✅/❌ at the end.
//
// The adapter is safe for concurrent use: the router's workers call Open,
// Post and StartProgress from many goroutines.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/sleuth-bot/sleuth/bot"
)

// Adapter is the Slack platform. Create it with New; drive it with a
// bot.Router (Attach, then Run).
type Adapter struct {
	cfg Config
	api *slack.Client
	log *slog.Logger

	// identity, learnt from Config, auth.test or event authorizations.
	botUser   atomic.Value // string, U…
	teamURL   atomic.Value // string, https://team.slack.com/
	teamID    atomic.Value // string, T…
	inbox     atomic.Pointer[inboxBox]
	connected atomic.Bool // Socket Mode: the WebSocket is up
	assistant *threadSet

	// side runs best-effort Web API calls that events trigger (suggested
	// prompts, "busy" notices) off the receive path. Drained by Run.
	side chan func(context.Context)
}

type inboxBox struct{ in bot.Inbox }

// sideQueueSize bounds the best-effort calls waiting for the side worker;
// more are dropped with a log line.
const sideQueueSize = 64

var _ bot.Adapter = (*Adapter)(nil)

// New validates cfg and returns an adapter. It does no network I/O.
func New(cfg Config) (*Adapter, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	opts := []slack.Option{
		slack.OptionAPIURL(cfg.APIURL),
		slack.OptionHTTPClient(cfg.HTTPClient),
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	a := &Adapter{
		cfg:       cfg,
		api:       slack.New(cfg.BotToken, opts...),
		log:       cfg.Logger.With("platform", bot.PlatformSlack),
		assistant: newThreadSet(maxAssistantThreads),
		side:      make(chan func(context.Context), sideQueueSize),
	}
	a.botUser.Store(cfg.BotUserID)
	a.teamURL.Store("")
	return a, nil
}

// Platform returns bot.PlatformSlack.
func (a *Adapter) Platform() string { return bot.PlatformSlack }

// Run receives events until ctx is cancelled and hands them to in. In
// Socket Mode it holds the WebSocket connection (reconnecting as slack-go
// does); in HTTP mode events arrive through the handler Routes mounted and
// Run only serves until ctx is done. It returns nil on a clean stop.
func (a *Adapter) Run(ctx context.Context, in bot.Inbox) error {
	if in == nil {
		return fmt.Errorf("%w: Run needs an inbox", ErrConfig)
	}
	a.identify(ctx)
	a.inbox.Store(&inboxBox{in: in})
	defer a.inbox.Store(nil)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owner: Run; exits when ctx is done.
		defer wg.Done()
		a.runSide(ctx)
	}()
	defer wg.Wait()

	if a.cfg.HTTPMode() {
		a.log.Info("slack: serving the HTTP Events API", "path", EventsPath)
		<-ctx.Done()
		return nil
	}
	a.log.Info("slack: connecting in Socket Mode")
	err := a.runSocket(ctx, in)
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return err
}

// identify asks auth.test for the bot's user id and workspace URL. A
// failure is logged: events also carry the bot's id.
func (a *Adapter) identify(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var res *slack.AuthTestResponse
	err := a.call(ctx, "auth.test", func(ctx context.Context) (err error) {
		res, err = a.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		a.log.Warn("slack: auth.test failed; learning the bot id from events", "error", err)
		return
	}
	if a.bot() == "" {
		a.botUser.Store(res.UserID)
	}
	a.teamURL.Store(res.URL)
	a.teamID.Store(res.TeamID)
	a.log.Info("slack: authenticated", "team_id", res.TeamID, "bot_user", res.UserID)
}

// Tenant returns the workspace (team) id, as in the messages' Tenant. It
// asks auth.test when Run has not learnt it yet (a job posting before the
// first connection, or `sleuth jobs run`); "" when Slack cannot say.
func (a *Adapter) Tenant() string {
	if id, _ := a.teamID.Load().(string); id != "" {
		return id
	}
	a.identify(context.Background())
	id, _ := a.teamID.Load().(string)
	return id
}

// ErrNotReady reports an adapter that cannot receive events right now.
var ErrNotReady = errors.New("slack: not receiving events")

// Ready reports whether events can arrive: Run has started and, in Socket
// Mode, the WebSocket is connected. main serves it on /readyz.
func (a *Adapter) Ready(context.Context) error {
	if a.inbox.Load() == nil {
		return fmt.Errorf("%w: not running", ErrNotReady)
	}
	if !a.cfg.HTTPMode() && !a.connected.Load() {
		return fmt.Errorf("%w: Socket Mode is not connected", ErrNotReady)
	}
	return nil
}

func (a *Adapter) bot() string { return a.botUser.Load().(string) }

// runSide drains the side queue until ctx is done.
func (a *Adapter) runSide(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case fn := <-a.side:
			a.safely(ctx, fn)
		}
	}
}

func (a *Adapter) safely(ctx context.Context, fn func(context.Context)) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("slack: panic in a background call", "panic", fmt.Sprint(p))
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fn(cctx)
}

// later queues a best-effort call; it never blocks.
func (a *Adapter) later(what string, fn func(context.Context)) {
	select {
	case a.side <- fn:
	default:
		a.log.Warn("slack: background queue full, dropping call", "call", what)
	}
}

// call runs one Web API call, waiting out HTTP 429 answers as their
// Retry-After says (slack.RateLimitedError) up to MaxRetries times. A wait
// longer than MaxRetryWait, or a cancelled ctx, ends it with the error.
func (a *Adapter) call(ctx context.Context, method string, fn func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		var rl *slack.RateLimitedError
		if err == nil || !errors.As(err, &rl) || attempt >= a.cfg.MaxRetries {
			if err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			return nil
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		if wait > a.cfg.MaxRetryWait {
			return fmt.Errorf("%s: %w", method, err)
		}
		a.log.Warn("slack: rate limited, waiting", "method", method, "retry_after", wait.String(), "attempt", attempt+1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", method, errors.Join(err, ctx.Err()))
		case <-t.C:
		}
	}
}

// isSlackErr reports whether err carries Slack's error code code (the
// "error" field of an ok:false answer).
func isSlackErr(err error, code string) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && se.Err == code
}
