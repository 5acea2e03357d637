package slack

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/sleuth-bot/sleuth/bot"
)

// runSocket holds the Socket Mode connection and drains its events until
// ctx is done. slack-go reconnects on its own; an invalid token ends Run.
func (a *Adapter) runSocket(ctx context.Context, in bot.Inbox) error {
	c := socketmode.New(a.api, socketmode.OptionLog(slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		wg     sync.WaitGroup
		runErr error
	)
	wg.Add(1)
	go func() { // owner: runSocket; exits when ctx is cancelled.
		defer wg.Done()
		runErr = c.RunContext(ctx)
		cancel()
	}()
	defer wg.Wait()
	defer a.connected.Store(false)

	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return runErr
		case evt, ok := <-c.Events:
			if !ok {
				return nil
			}
			if err := a.handleSocketEvent(ctx, evt, c.Ack, in); err != nil {
				cancel()
				wg.Wait()
				return err
			}
		}
	}
}

// handleSocketEvent handles one Socket Mode event. An events_api envelope
// is acknowledged with ack before anything else happens to it, then
// normalised and handed to in. A non-nil error ends the connection.
func (a *Adapter) handleSocketEvent(ctx context.Context, evt socketmode.Event, ack func(socketmode.Request, ...any) error, in bot.Inbox) error {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		a.connected.Store(false)
		a.log.Debug("slack: socket mode connecting")
	case socketmode.EventTypeConnected:
		a.connected.Store(true)
		a.log.Info("slack: socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect:
		a.connected.Store(false)
		a.log.Warn("slack: socket mode connection error; slack-go retries", "error", fmt.Sprint(evt.Data))
	case socketmode.EventTypeInvalidAuth:
		return fmt.Errorf("%w: Slack refused the app token (invalid_auth)", ErrConfig)
	case socketmode.EventTypeEventsAPI:
		if evt.Request == nil {
			return nil
		}
		if err := ack(*evt.Request); err != nil {
			a.log.Warn("slack: ack failed", "error", err)
		}
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok {
			a.log.Warn("slack: unexpected events_api payload", "type", fmt.Sprintf("%T", evt.Data))
			return nil
		}
		a.dispatch(ctx, in, ev, evt.Request.RetryAttempt)
	case socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		// Not used by sleuth; ack so Slack does not retry them.
		if evt.Request != nil {
			_ = ack(*evt.Request)
		}
	}
	return nil
}
