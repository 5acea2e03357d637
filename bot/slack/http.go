package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// EventsPath is where the HTTP Events API handler is mounted.
const EventsPath = "/slack/events"

const (
	// maxEventBody caps an Events API request body. Slack's event payloads
	// are a few KB; 1 MiB leaves room for messages with many blocks.
	maxEventBody = 1 << 20
	// signatureWindow is how far a request timestamp may be from our clock:
	// Slack's replay guard is 5 minutes
	// (docs.slack.dev/authentication/verifying-requests-from-slack).
	signatureWindow = 5 * time.Minute
	// deliverTimeout bounds the hand-off to the router after the ack.
	deliverTimeout = 10 * time.Second
)

// Signature errors. A request that fails either gets 401 and no work.
var (
	ErrBadSignature = errors.New("slack: request signature does not match")
	ErrStaleRequest = errors.New("slack: request timestamp outside the 5-minute window")
)

// Routes mounts the Events API handler at POST /slack/events on mux. It
// registers nothing in Socket Mode. Events are acknowledged (HTTP 200)
// before they are handed to the router; until Run has started, the handler
// answers 503 so Slack retries later.
func (a *Adapter) Routes(mux *http.ServeMux) {
	if !a.cfg.HTTPMode() {
		return
	}
	mux.HandleFunc("POST "+EventsPath, a.serveEvents)
}

func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	if err := verifySignature(a.cfg.SigningSecret, r.Header, body, a.cfg.Now()); err != nil {
		metrics.EventsReceived.WithLabelValues(bot.PlatformSlack, outcomeRejected).Inc()
		a.log.Warn("slack: rejected an unsigned or stale request", "error", err, "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		a.log.Warn("slack: cannot parse event", "error", err)
		http.Error(w, "cannot parse event", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		uv, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if !ok {
			http.Error(w, "bad url_verification", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(slackevents.ChallengeResponse{Challenge: uv.Challenge})
		return
	case slackevents.CallbackEvent, slackevents.AppRateLimited:
	default:
		w.WriteHeader(http.StatusOK)
		return
	}
	box := a.inbox.Load()
	if box == nil {
		// Not running yet (or stopping): let Slack retry this event.
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	// Ack first: Slack wants a 2xx within 3 s, and the router only queues.
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	retry, _ := strconv.Atoi(r.Header.Get("X-Slack-Retry-Num"))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), deliverTimeout)
	defer cancel()
	a.dispatch(ctx, box.in, ev, retry)
}

// verifySignature checks Slack's v0 request signature:
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)), with the
// timestamp within signatureWindow of now, compared in constant time.
func verifySignature(secret string, h http.Header, body []byte, now time.Time) error {
	tsHeader := h.Get("X-Slack-Request-Timestamp")
	sig := h.Get("X-Slack-Signature")
	if tsHeader == "" || sig == "" {
		return fmt.Errorf("%w: missing X-Slack-Signature or X-Slack-Request-Timestamp", ErrBadSignature)
	}
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad timestamp", ErrBadSignature)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > signatureWindow || d < -signatureWindow {
		return ErrStaleRequest
	}
	want := sign(secret, tsHeader, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return ErrBadSignature
	}
	return nil
}

// sign computes Slack's v0 signature of body sent at timestamp ts.
func sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
