package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

// Limits of the Open API that the REST client respects.
const (
	// apiTimeout bounds one REST call (not downloads).
	apiTimeout = 30 * time.Second
	// maxAPIResponse caps a JSON response body read into memory.
	maxAPIResponse = 4 << 20
	// tokenEarlyExpiry refreshes the tenant token this long before it
	// expires, as the SDK's token manager does (3 minutes).
	tokenEarlyExpiry = 3 * time.Minute
	// logIDHeader carries the platform's request id; Feishu support asks
	// for it when a call fails.
	logIDHeader = "X-Tt-Logid"
	// maxUploadBytes is im.v1.file.create's limit (30 MB).
	maxUploadBytes = 30 << 20
)

// Token error codes after which the SDK retries once with a fresh token
// (core/httptransport.go): invalid, expired, or malformed access token.
var tokenErrorCodes = map[int]bool{99991663: true, 99991664: true, 99991671: true}

// ErrAPI reports a business error of the Open API (code != 0) or an
// unexpected HTTP status. errors.As with *APIError gives the details.
var ErrAPI = errors.New("feishu api error")

// APIError is a failed Open API call.
type APIError struct {
	Op     string // the API, e.g. "im.message.reply"
	Status int    // HTTP status
	Code   int    // Feishu error code, 0 when the body was not JSON
	Msg    string // Feishu error message
	LogID  string // X-Tt-Logid, quote it to Feishu support
}

func (e *APIError) Error() string {
	return fmt.Sprintf("feishu %s: http %d code %d: %s (log_id %s)", e.Op, e.Status, e.Code, e.Msg, e.LogID)
}

// Unwrap makes errors.Is(err, ErrAPI) true.
func (e *APIError) Unwrap() error { return ErrAPI }

// envelope is the common shape of Open API responses.
type envelope struct {
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
	// Bot is bot/v3/info's payload, which sits beside data.
	Bot json.RawMessage `json:"bot"`
	// Token fields of auth/v3/tenant_access_token/internal.
	TenantAccessToken string `json:"tenant_access_token"`
	Expire            int64  `json:"expire"`
}

// apiClient is a small Open API client: tenant token cache, JSON calls
// with business-error handling, per-chat rate limiting and streaming
// downloads (the SDK buffers whole files in memory). Safe for concurrent
// use.
type apiClient struct {
	base   string
	appID  string
	secret string
	hc     *http.Client
	log    *slog.Logger
	now    func() time.Time
	limit  *chatLimiter

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (c *apiClient) tenantToken(ctx context.Context, fresh bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && c.token != "" && c.now().Before(c.expires) {
		return c.token, nil
	}
	body, _ := json.Marshal(map[string]string{"app_id": c.appID, "app_secret": c.secret})
	env, _, err := c.roundTrip(ctx, "auth.tenant_access_token", http.MethodPost, "/open-apis/auth/v3/tenant_access_token/internal", nil, "application/json; charset=utf-8", body, "")
	if err != nil {
		return "", err
	}
	if env.TenantAccessToken == "" {
		return "", &APIError{Op: "auth.tenant_access_token", Status: http.StatusOK, Msg: "empty tenant_access_token"}
	}
	c.token = env.TenantAccessToken
	ttl := time.Duration(env.Expire)*time.Second - tokenEarlyExpiry
	if ttl < time.Minute {
		ttl = time.Minute
	}
	c.expires = c.now().Add(ttl)
	return c.token, nil
}

// call performs an authenticated JSON call and returns the envelope. On a
// token error it refreshes the token and retries once.
func (c *apiClient) call(ctx context.Context, op, method, path string, query url.Values, in any) (*envelope, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, fmt.Errorf("feishu %s: encode: %w", op, err)
		}
	}
	return c.authed(ctx, op, method, path, query, "application/json; charset=utf-8", body)
}

func (c *apiClient) authed(ctx context.Context, op, method, path string, query url.Values, ctype string, body []byte) (*envelope, error) {
	for attempt := 0; ; attempt++ {
		tok, err := c.tenantToken(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		env, _, err := c.roundTrip(ctx, op, method, path, query, ctype, body, tok)
		var ae *APIError
		if attempt == 0 && errors.As(err, &ae) && tokenErrorCodes[ae.Code] {
			continue
		}
		return env, err
	}
}

// roundTrip sends one request and decodes the envelope; code != 0 and
// non-2xx statuses become *APIError, logged with the request's log id.
func (c *apiClient) roundTrip(ctx context.Context, op, method, path string, query url.Values, ctype string, body []byte, token string) (*envelope, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("feishu %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("feishu %s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse))
	if err != nil {
		return nil, resp.Header, fmt.Errorf("feishu %s: read response: %w", op, err)
	}
	var env envelope
	jerr := json.Unmarshal(raw, &env)
	if jerr != nil || env.Code != 0 || resp.StatusCode/100 != 2 {
		ae := &APIError{Op: op, Status: resp.StatusCode, Code: env.Code, Msg: env.Msg, LogID: resp.Header.Get(logIDHeader)}
		if jerr != nil && ae.Msg == "" {
			ae.Msg = "response is not JSON"
		}
		c.log.Warn("feishu api call failed", "op", op, "status", ae.Status, "code", ae.Code, "msg", ae.Msg, "log_id", ae.LogID)
		return &env, resp.Header, ae
	}
	return &env, resp.Header, nil
}

// botOpenID returns the bot's open_id from bot/v3/info.
func (c *apiClient) botOpenID(ctx context.Context) (string, error) {
	env, err := c.call(ctx, "bot.info", http.MethodGet, "/open-apis/bot/v3/info", nil, nil)
	if err != nil {
		return "", err
	}
	var b struct {
		OpenID string `json:"open_id"`
	}
	if err := json.Unmarshal(env.Bot, &b); err != nil || b.OpenID == "" {
		return "", &APIError{Op: "bot.info", Status: http.StatusOK, Msg: "no bot.open_id in response"}
	}
	return b.OpenID, nil
}

type sentMessage struct {
	MessageID string `json:"message_id"`
	ThreadID  string `json:"thread_id"`
}

// reply answers messageID in its thread. uuid makes the send idempotent
// for an hour.
func (c *apiClient) reply(ctx context.Context, chat, messageID, msgType, content, uuid string) (sentMessage, error) {
	if err := c.limit.Wait(ctx, chat); err != nil {
		return sentMessage{}, err
	}
	in := map[string]any{"msg_type": msgType, "content": content, "reply_in_thread": true, "uuid": uuid}
	env, err := c.call(ctx, "im.message.reply", http.MethodPost, "/open-apis/im/v1/messages/"+url.PathEscape(messageID)+"/reply", nil, in)
	if err != nil {
		return sentMessage{}, err
	}
	return decodeSent("im.message.reply", env)
}

// send posts a new top-level message to a chat.
func (c *apiClient) send(ctx context.Context, chat, msgType, content, uuid string) (sentMessage, error) {
	if err := c.limit.Wait(ctx, chat); err != nil {
		return sentMessage{}, err
	}
	in := map[string]any{"receive_id": chat, "msg_type": msgType, "content": content, "uuid": uuid}
	env, err := c.call(ctx, "im.message.create", http.MethodPost, "/open-apis/im/v1/messages", url.Values{"receive_id_type": {"chat_id"}}, in)
	if err != nil {
		return sentMessage{}, err
	}
	return decodeSent("im.message.create", env)
}

func decodeSent(op string, env *envelope) (sentMessage, error) {
	var m sentMessage
	if err := json.Unmarshal(env.Data, &m); err != nil || m.MessageID == "" {
		return sentMessage{}, &APIError{Op: op, Status: http.StatusOK, Msg: "no message_id in response"}
	}
	return m, nil
}

// patch replaces a card message's content in place.
func (c *apiClient) patch(ctx context.Context, chat, messageID, content string) error {
	if err := c.limit.Wait(ctx, chat); err != nil {
		return err
	}
	_, err := c.call(ctx, "im.message.patch", http.MethodPatch, "/open-apis/im/v1/messages/"+url.PathEscape(messageID), nil, map[string]string{"content": content})
	return err
}

// react adds an emoji reaction to a message.
func (c *apiClient) react(ctx context.Context, chat, messageID, emoji string) error {
	if err := c.limit.Wait(ctx, chat); err != nil {
		return err
	}
	in := map[string]any{"reaction_type": map[string]string{"emoji_type": emoji}}
	_, err := c.call(ctx, "im.message_reaction.create", http.MethodPost, "/open-apis/im/v1/messages/"+url.PathEscape(messageID)+"/reactions", nil, in)
	return err
}

// uploadFile uploads bytes as a "stream" file and returns its file_key.
func (c *apiClient) uploadFile(ctx context.Context, name string, data []byte) (string, error) {
	if len(data) > maxUploadBytes {
		return "", fmt.Errorf("upload %s: %w", name, bot.ErrTooLarge)
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("file_type", "stream")
	_ = w.WriteField("file_name", name)
	fw, err := w.CreateFormFile("file", name)
	if err != nil {
		return "", err
	}
	_, _ = fw.Write(data)
	if err := w.Close(); err != nil {
		return "", err
	}
	env, err := c.authed(ctx, "im.file.create", http.MethodPost, "/open-apis/im/v1/files", nil, w.FormDataContentType(), buf.Bytes())
	if err != nil {
		return "", err
	}
	var out struct {
		FileKey string `json:"file_key"`
	}
	if err := json.Unmarshal(env.Data, &out); err != nil || out.FileKey == "" {
		return "", &APIError{Op: "im.file.create", Status: http.StatusOK, Msg: "no file_key in response"}
	}
	return out.FileKey, nil
}

// download streams a message resource (im.v1.messageResource.get). The
// returned reader fails with bot.ErrTooLarge once more than limit bytes
// were read; a Content-Length over the limit fails at once.
func (c *apiClient) download(ctx context.Context, messageID, key, typ string, limit int64) (io.ReadCloser, error) {
	const op = "im.message_resource.get"
	path := "/open-apis/im/v1/messages/" + url.PathEscape(messageID) + "/resources/" + url.PathEscape(key)
	for attempt := 0; ; attempt++ {
		tok, err := c.tenantToken(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path+"?"+url.Values{"type": {typ}}.Encode(), nil)
		if err != nil {
			return nil, fmt.Errorf("feishu %s: %w", op, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("feishu %s: %w", op, err)
		}
		ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.StatusCode/100 != 2 || ctype == "application/json" {
			// Errors come back as a JSON envelope instead of the bytes.
			raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse))
			resp.Body.Close()
			var env envelope
			_ = json.Unmarshal(raw, &env)
			ae := &APIError{Op: op, Status: resp.StatusCode, Code: env.Code, Msg: env.Msg, LogID: resp.Header.Get(logIDHeader)}
			if ae.Code == 0 && ae.Msg == "" {
				ae.Msg = "unexpected response"
			}
			if attempt == 0 && tokenErrorCodes[ae.Code] {
				continue
			}
			c.log.Warn("feishu api call failed", "op", op, "status", ae.Status, "code", ae.Code, "msg", ae.Msg, "log_id", ae.LogID)
			return nil, ae
		}
		if resp.ContentLength > limit {
			resp.Body.Close()
			return nil, fmt.Errorf("download %s (%d bytes, limit %d): %w", key, resp.ContentLength, limit, bot.ErrTooLarge)
		}
		return &cappedReader{rc: resp.Body, left: limit, name: key}, nil
	}
}

// cappedReader passes through at most limit bytes and then fails with
// bot.ErrTooLarge, so a body without Content-Length cannot exceed the cap.
type cappedReader struct {
	rc   io.ReadCloser
	left int64
	name string
}

func (r *cappedReader) Read(p []byte) (int, error) {
	if r.left < 0 {
		return 0, fmt.Errorf("download %s: %w", r.name, bot.ErrTooLarge)
	}
	// Read one byte past the cap to tell "exactly at the cap" from "over".
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.rc.Read(p)
	if int64(n) > r.left {
		n = int(r.left)
		r.left = -1
		return n, fmt.Errorf("download %s: %w", r.name, bot.ErrTooLarge)
	}
	r.left -= int64(n)
	return n, err
}

func (r *cappedReader) Close() error { return r.rc.Close() }

// chatLimiter is a token bucket per chat: rate sends per second with a
// burst of rate. Idle buckets are dropped when the map grows, so memory
// stays bounded by the number of recently active chats. Safe for
// concurrent use.
type chatLimiter struct {
	rate float64
	now  func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxIdleBuckets = 1024

func newChatLimiter(qps int, now func() time.Time) *chatLimiter {
	return &chatLimiter{rate: float64(qps), now: now, buckets: make(map[string]*bucket)}
}

// Wait reserves one send for chat and sleeps until it is due or ctx ends.
func (l *chatLimiter) Wait(ctx context.Context, chat string) error {
	l.mu.Lock()
	now := l.now()
	b := l.buckets[chat]
	if b == nil {
		if len(l.buckets) >= maxIdleBuckets {
			l.evictLocked(now)
		}
		b = &bucket{tokens: l.rate, last: now}
		l.buckets[chat] = b
	}
	b.tokens += now.Sub(b.last).Seconds() * l.rate
	if b.tokens > l.rate {
		b.tokens = l.rate
	}
	b.last = now
	b.tokens--
	var wait time.Duration
	if b.tokens < 0 {
		wait = time.Duration(-b.tokens / l.rate * float64(time.Second))
	}
	l.mu.Unlock()
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *chatLimiter) evictLocked(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.rate {
			delete(l.buckets, k)
		}
	}
}
