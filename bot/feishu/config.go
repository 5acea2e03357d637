package feishu

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Base URLs of the Open Platform (the same values as lark.FeishuBaseUrl and
// lark.LarkBaseUrl in oapi-sdk-go).
const (
	FeishuBaseURL = "https://open.feishu.cn"
	LarkBaseURL   = "https://open.larksuite.com"
)

// Transport modes.
const (
	// ModeLongConnection receives events over the SDK's WebSocket client
	// (no public URL needed). The default.
	ModeLongConnection = "ws"
	// ModeWebhook receives events at POST EventsPath on the shared HTTP
	// server.
	ModeWebhook = "webhook"
)

// EventsPath is where webhook events are received.
const EventsPath = "/feishu/events"

// Defaults and platform limits.
const (
	// DefaultMaxAttachmentBytes is the attachment cap when
	// SLEUTH_MAX_ATTACHMENT_MB is unset (200 MB). The platform itself serves
	// at most 100 MB through im.v1.messageResource.get.
	DefaultMaxAttachmentBytes = 200 << 20
	// DefaultMaxEventBytes caps a webhook request body. Feishu events are a
	// few KB; 1 MiB leaves room for long post messages.
	DefaultMaxEventBytes = 1 << 20
	// DefaultSignatureWindow is how far X-Lark-Request-Timestamp may be from
	// local time. The SDK checks no freshness at all; 5 minutes matches
	// Slack's rule and tolerates ordinary clock skew.
	DefaultSignatureWindow = 5 * time.Minute
	// DefaultChatQPS is Feishu's send limit: 5 QPS per user / per group,
	// shared by all bots in the group (im-v1/message/reply docs).
	DefaultChatQPS = 5
	// DefaultFileWindow is how long a file posted on its own waits for a
	// mention by the same sender in the same chat.
	DefaultFileWindow = 5 * time.Minute
	// DefaultReaction is the emoji added to a message sleuth starts working
	// on. Best effort: an unknown key only logs a warning.
	DefaultReaction = "OnIt"
)

// Config configures an Adapter. Only AppID and AppSecret are required.
type Config struct {
	// AppID and AppSecret identify the self-built app (FEISHU_APP_ID,
	// FEISHU_APP_SECRET). Required.
	AppID     string
	AppSecret string
	// Domain is "feishu" (default) or "lark" (Lark international,
	// FEISHU_DOMAIN). It selects the REST base URL and the long-connection
	// domain.
	Domain string
	// BaseURL overrides the Open API base (FEISHU_BASE_URL), e.g. a private
	// deployment or a test server. Empty: derived from Domain.
	BaseURL string
	// Mode is ModeLongConnection (default when empty) or ModeWebhook.
	Mode string
	// VerificationToken and EncryptKey secure webhook mode
	// (FEISHU_VERIFICATION_TOKEN, FEISHU_ENCRYPT_KEY); both are required
	// there, because without an Encrypt Key requests carry no signature.
	VerificationToken string
	EncryptKey        string
	// MaxAttachmentBytes caps one download (SLEUTH_MAX_ATTACHMENT_MB).
	// Zero: DefaultMaxAttachmentBytes.
	MaxAttachmentBytes int64
	// MaxEventBytes caps a webhook body. Zero: DefaultMaxEventBytes.
	MaxEventBytes int64
	// SignatureWindow is the accepted clock distance of a signed webhook
	// request. Zero: DefaultSignatureWindow.
	SignatureWindow time.Duration
	// ChatQPS limits sends and updates per chat. Zero: DefaultChatQPS.
	ChatQPS int
	// FileWindow: see DefaultFileWindow. Zero: the default.
	FileWindow time.Duration
	// Reaction is the emoji type added on receipt; "-" disables it. Empty:
	// DefaultReaction.
	Reaction string
	// BotOpenID is the bot's open_id. Empty: fetched from bot/v3/info by New.
	BotOpenID string
	// HTTPClient is used for REST calls. Nil: a plain client; API calls are
	// bounded by apiTimeout, downloads by their context only.
	HTTPClient *http.Client
	// Logger receives the adapter's logs. Nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock (tests). Nil: time.Now.
	Now func() time.Time
}

// ErrConfig reports an invalid configuration.
var ErrConfig = errors.New("feishu: invalid config")

// ConfigFromEnv reads the adapter's settings. ok is false when Feishu is not
// configured at all (neither FEISHU_APP_ID nor FEISHU_APP_SECRET set); a
// half configuration is an error naming the missing variable.
//
// Variables: FEISHU_APP_ID, FEISHU_APP_SECRET, FEISHU_DOMAIN (feishu|lark),
// FEISHU_BASE_URL, FEISHU_MODE (ws|webhook; webhook is implied when
// FEISHU_VERIFICATION_TOKEN or FEISHU_ENCRYPT_KEY is set),
// FEISHU_VERIFICATION_TOKEN, FEISHU_ENCRYPT_KEY, SLEUTH_MAX_ATTACHMENT_MB.
func ConfigFromEnv(getenv func(string) string) (Config, bool, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	cfg := Config{
		AppID:             get("FEISHU_APP_ID"),
		AppSecret:         get("FEISHU_APP_SECRET"),
		Domain:            strings.ToLower(get("FEISHU_DOMAIN")),
		BaseURL:           get("FEISHU_BASE_URL"),
		Mode:              strings.ToLower(get("FEISHU_MODE")),
		VerificationToken: get("FEISHU_VERIFICATION_TOKEN"),
		EncryptKey:        get("FEISHU_ENCRYPT_KEY"),
	}
	if cfg.AppID == "" && cfg.AppSecret == "" {
		return Config{}, false, nil
	}
	var errs []error
	if cfg.AppID == "" {
		errs = append(errs, fmt.Errorf("%w: FEISHU_APP_ID is not set (FEISHU_APP_SECRET is)", ErrConfig))
	}
	if cfg.AppSecret == "" {
		errs = append(errs, fmt.Errorf("%w: FEISHU_APP_SECRET is not set (FEISHU_APP_ID is)", ErrConfig))
	}
	if cfg.Mode == "" && (cfg.VerificationToken != "" || cfg.EncryptKey != "") {
		cfg.Mode = ModeWebhook
	}
	if cfg.Mode == ModeWebhook {
		if cfg.VerificationToken == "" {
			errs = append(errs, fmt.Errorf("%w: FEISHU_VERIFICATION_TOKEN is required in webhook mode", ErrConfig))
		}
		if cfg.EncryptKey == "" {
			errs = append(errs, fmt.Errorf("%w: FEISHU_ENCRYPT_KEY is required in webhook mode (unencrypted events are unsigned)", ErrConfig))
		}
	}
	if v := get("SLEUTH_MAX_ATTACHMENT_MB"); v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb <= 0 {
			errs = append(errs, fmt.Errorf("%w: SLEUTH_MAX_ATTACHMENT_MB=%q is not a positive integer", ErrConfig, v))
		} else {
			cfg.MaxAttachmentBytes = mb << 20
		}
	}
	if err := cfg.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, true, err
	}
	return cfg, true, nil
}

// validate checks cfg and fills defaults in place.
func (c *Config) validate() error {
	var errs []error
	if c.AppID == "" {
		errs = append(errs, fmt.Errorf("%w: AppID is required", ErrConfig))
	}
	if c.AppSecret == "" {
		errs = append(errs, fmt.Errorf("%w: AppSecret is required", ErrConfig))
	}
	switch c.Domain {
	case "", "feishu":
		c.Domain = "feishu"
	case "lark", "larksuite":
		c.Domain = "lark"
	default:
		errs = append(errs, fmt.Errorf("%w: FEISHU_DOMAIN=%q (want feishu or lark)", ErrConfig, c.Domain))
	}
	if c.BaseURL == "" {
		c.BaseURL = FeishuBaseURL
		if c.Domain == "lark" {
			c.BaseURL = LarkBaseURL
		}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if !strings.HasPrefix(c.BaseURL, "https://") && !strings.HasPrefix(c.BaseURL, "http://") {
		errs = append(errs, fmt.Errorf("%w: FEISHU_BASE_URL=%q is not an http(s) URL", ErrConfig, c.BaseURL))
	}
	switch c.Mode {
	case "", ModeLongConnection, "long", "longconn":
		c.Mode = ModeLongConnection
	case ModeWebhook, "http":
		c.Mode = ModeWebhook
		if c.VerificationToken == "" || c.EncryptKey == "" {
			errs = append(errs, fmt.Errorf("%w: webhook mode needs VerificationToken and EncryptKey", ErrConfig))
		}
	default:
		errs = append(errs, fmt.Errorf("%w: FEISHU_MODE=%q (want ws or webhook)", ErrConfig, c.Mode))
	}
	if c.MaxAttachmentBytes < 0 || c.MaxEventBytes < 0 || c.SignatureWindow < 0 || c.ChatQPS < 0 || c.FileWindow < 0 {
		errs = append(errs, fmt.Errorf("%w: limits must not be negative", ErrConfig))
	}
	if c.MaxAttachmentBytes == 0 {
		c.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if c.MaxEventBytes == 0 {
		c.MaxEventBytes = DefaultMaxEventBytes
	}
	if c.SignatureWindow == 0 {
		c.SignatureWindow = DefaultSignatureWindow
	}
	if c.ChatQPS == 0 {
		c.ChatQPS = DefaultChatQPS
	}
	if c.FileWindow == 0 {
		c.FileWindow = DefaultFileWindow
	}
	if c.Reaction == "" {
		c.Reaction = DefaultReaction
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return errors.Join(errs...)
}
