package feishu

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// Webhook headers (larkevent.EventRequestTimestamp and friends).
const (
	headerTimestamp = "X-Lark-Request-Timestamp"
	headerNonce     = "X-Lark-Request-Nonce"
	headerSignature = "X-Lark-Signature"
)

// Webhook verification errors.
var (
	// ErrBadSignature reports a missing or wrong X-Lark-Signature.
	ErrBadSignature = errors.New("feishu: bad request signature")
	// ErrStaleRequest reports a timestamp outside the signature window.
	ErrStaleRequest = errors.New("feishu: request timestamp outside the allowed window")
	// ErrBadToken reports a wrong verification token.
	ErrBadToken = errors.New("feishu: bad verification token")
	// ErrDecrypt reports an event that cannot be decrypted.
	ErrDecrypt = errors.New("feishu: cannot decrypt event")
)

// Signature computes Feishu's webhook signature:
// hex(sha256(timestamp + nonce + encryptKey + body)).
func Signature(timestamp, nonce, encryptKey string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp))
	h.Write([]byte(nonce))
	h.Write([]byte(encryptKey))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// VerifySignature checks a signed webhook request: the timestamp (Unix
// seconds) must be within window of now, and the signature must match,
// compared in constant time. The SDK checks neither freshness nor compares
// in constant time.
func VerifySignature(timestamp, nonce, signature, encryptKey string, body []byte, now time.Time, window time.Duration) error {
	if signature == "" || timestamp == "" {
		return fmt.Errorf("%w: missing %s or %s", ErrBadSignature, headerSignature, headerTimestamp)
	}
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q", ErrStaleRequest, timestamp)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > window || d < -window {
		return fmt.Errorf("%w: off by %s", ErrStaleRequest, d.Round(time.Second))
	}
	want := Signature(timestamp, nonce, encryptKey, body)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(signature))) != 1 {
		return ErrBadSignature
	}
	return nil
}

// Decrypt decrypts an "encrypt" field: AES-256-CBC with key
// SHA256(encryptKey), the IV in the first 16 bytes, PKCS#7 padding (which,
// unlike larkevent.EventDecrypt, is validated and removed).
func Decrypt(encrypted, encryptKey string) ([]byte, error) {
	buf, err := base64.StdEncoding.DecodeString(encrypted)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %v", ErrDecrypt, err)
	}
	if len(buf) < 2*aes.BlockSize || len(buf)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w: bad length %d", ErrDecrypt, len(buf))
	}
	key := sha256.Sum256([]byte(encryptKey))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	iv, data := buf[:aes.BlockSize], buf[aes.BlockSize:]
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize || pad > len(out) {
		return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
		}
	}
	return out[:len(out)-pad], nil
}

// Routes registers the webhook endpoint (POST EventsPath) on mux. It is
// used in webhook mode; in long-connection mode the endpoint answers 404 so
// a stray configuration is visible.
func (a *Adapter) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+EventsPath, a.serveEvents)
}

// webhookBody is the outer and inner shape of a webhook request.
type webhookBody struct {
	Encrypt   string `json:"encrypt"`
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	Token     string `json:"token"`
	Schema    string `json:"schema"`
	Header    *struct {
		EventType string `json:"event_type"`
		Token     string `json:"token"`
	} `json:"header"`
}

// serveEvents handles one webhook delivery: bounded body, decryption,
// challenge, signature and token checks, then a quick hand-off to the
// router. It answers within the platform's deadline because Deliver only
// queues.
func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Mode != ModeWebhook {
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxEventBytes))
	if err != nil {
		a.reject(w, http.StatusRequestEntityTooLarge, "body too large or unreadable", err)
		return
	}
	var outer webhookBody
	if err := json.Unmarshal(raw, &outer); err != nil {
		a.reject(w, http.StatusBadRequest, "body is not JSON", err)
		return
	}
	if outer.Encrypt == "" {
		// With an Encrypt Key configured, Feishu encrypts everything;
		// a plaintext request is not from Feishu.
		a.reject(w, http.StatusBadRequest, "event is not encrypted", nil)
		return
	}
	plain, err := Decrypt(outer.Encrypt, a.cfg.EncryptKey)
	if err != nil {
		a.reject(w, http.StatusBadRequest, "cannot decrypt", err)
		return
	}
	var inner webhookBody
	if err := json.Unmarshal(plain, &inner); err != nil {
		a.reject(w, http.StatusBadRequest, "decrypted event is not JSON", err)
		return
	}
	if inner.Type == "url_verification" {
		// The challenge is unsigned; decrypting it proves the sender knows
		// the Encrypt Key, and the token must match as well.
		if !tokenEqual(inner.Token, a.cfg.VerificationToken) {
			a.reject(w, http.StatusUnauthorized, "bad verification token", ErrBadToken)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": inner.Challenge})
		return
	}
	if err := VerifySignature(r.Header.Get(headerTimestamp), r.Header.Get(headerNonce), r.Header.Get(headerSignature),
		a.cfg.EncryptKey, raw, a.cfg.Now(), a.cfg.SignatureWindow); err != nil {
		a.reject(w, http.StatusUnauthorized, "signature check failed", err)
		return
	}
	token := inner.Token
	if inner.Header != nil {
		token = inner.Header.Token
	}
	if !tokenEqual(token, a.cfg.VerificationToken) {
		a.reject(w, http.StatusUnauthorized, "bad verification token", ErrBadToken)
		return
	}
	eventType := ""
	if inner.Header != nil {
		eventType = inner.Header.EventType
	}
	if eventType != eventMessageReceive {
		a.log.Debug("feishu event ignored", "event_type", eventType)
		writeSuccess(w)
		return
	}
	ev, err := parseMessageEvent(plain)
	if err != nil {
		a.reject(w, http.StatusBadRequest, "bad im.message.receive_v1", err)
		return
	}
	if err := a.handleEvent(r.Context(), ev); err != nil {
		// Not accepted now (shutting down, not started): let Feishu retry.
		w.Header().Set("Retry-After", "15")
		http.Error(w, `{"msg":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	writeSuccess(w)
}

func writeSuccess(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.Copy(w, bytes.NewReader([]byte(`{"msg":"success"}`)))
}

func (a *Adapter) reject(w http.ResponseWriter, status int, why string, err error) {
	metrics.EventsReceived.WithLabelValues(bot.PlatformFeishu, "rejected").Inc()
	args := []any{"status", status, "reason", why}
	if err != nil {
		args = append(args, "error", err)
	}
	a.log.Warn("feishu webhook request rejected", args...)
	http.Error(w, `{"msg":"`+http.StatusText(status)+`"}`, status)
}

func tokenEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// handleEventCtx bounds the hand-off of one event; Deliver only queues.
func handleEventCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
}
