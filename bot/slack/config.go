package slack

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults for the zero values of Config.
const (
	// DefaultAPIURL is Slack's Web API base (slack-go's APIURL).
	DefaultAPIURL = "https://slack.com/api/"
	// DefaultMaxAttachmentBytes is the attachment cap when
	// SLEUTH_MAX_ATTACHMENT_MB is unset: 200 MiB.
	DefaultMaxAttachmentBytes = 200 << 20
	// DefaultMaxRetries is how often a call that got HTTP 429 is retried.
	DefaultMaxRetries = 3
	// DefaultMaxRetryWait caps one Retry-After wait; a longer wait fails the
	// call instead of holding a worker.
	DefaultMaxRetryWait = 30 * time.Second
	// DefaultUpdateInterval is the minimum time between two chat.update
	// calls for one placeholder. chat.update is Tier 3 (about 50 per minute
	// per workspace, docs.slack.dev/reference/methods/chat.update).
	DefaultUpdateInterval = 1500 * time.Millisecond
)

// Config configures the Slack adapter. Build it from the environment with
// ConfigFromEnv or fill it in directly (tests).
type Config struct {
	// BotToken is the bot user OAuth token (xoxb-…). Required.
	BotToken string
	// AppToken is the app-level token (xapp-…, scope connections:write).
	// Required for Socket Mode, which is used when SigningSecret is empty.
	AppToken string
	// SigningSecret switches the adapter to the HTTP Events API: requests
	// to POST /slack/events are verified with it. Optional.
	SigningSecret string
	// APIURL overrides the Web API base (tests, proxies, GovSlack:
	// https://slack-gov.com/api/). Optional; zero means DefaultAPIURL. It
	// must end with '/'; one is added when missing.
	APIURL string
	// MaxAttachmentBytes caps one downloaded attachment. Zero means
	// DefaultMaxAttachmentBytes; negative is invalid.
	MaxAttachmentBytes int64
	// BotUserID is the bot's user id (U…). Optional: Run asks auth.test,
	// and event payloads carry it in authorizations.
	BotUserID string
	// MaxRetries is how often a Web API call answered with HTTP 429 is
	// retried after its Retry-After. Zero means DefaultMaxRetries; negative
	// means never.
	MaxRetries int
	// MaxRetryWait caps one Retry-After wait. Zero means DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// UpdateInterval is the minimum time between placeholder updates. Zero
	// means DefaultUpdateInterval; negative means no throttling (tests).
	UpdateInterval time.Duration
	// HTTPClient is used for Web API calls and downloads. Optional; zero
	// means a plain http.Client: every call is bounded by its context
	// (downloads can be long, so no fixed timeout is set).
	HTTPClient *http.Client
	// Now is the clock used for signature timestamps. Optional (time.Now).
	Now func() time.Time
	// Logger receives the adapter's logs. Optional (slog.Default()).
	Logger *slog.Logger
}

// ErrConfig reports an invalid or half-made configuration.
var ErrConfig = errors.New("slack: invalid configuration")

// Environment variables ConfigFromEnv reads.
const (
	EnvBotToken      = "SLACK_BOT_TOKEN"
	EnvAppToken      = "SLACK_APP_TOKEN"
	EnvSigningSecret = "SLACK_SIGNING_SECRET"
	EnvAPIURL        = "SLACK_API_URL"
	EnvMaxAttachMB   = "SLEUTH_MAX_ATTACHMENT_MB"
)

// ConfigFromEnv reads the Slack settings. ok is false when Slack is not
// configured at all (no token and no signing secret). A half-made setup —
// a bot token with neither an app token nor a signing secret, or an app
// token or signing secret without a bot token — is an error that names the
// missing variable.
func ConfigFromEnv(getenv func(string) string) (cfg Config, ok bool, err error) {
	cfg = Config{
		BotToken:      strings.TrimSpace(getenv(EnvBotToken)),
		AppToken:      strings.TrimSpace(getenv(EnvAppToken)),
		SigningSecret: strings.TrimSpace(getenv(EnvSigningSecret)),
		APIURL:        strings.TrimSpace(getenv(EnvAPIURL)),
	}
	if cfg.BotToken == "" && cfg.AppToken == "" && cfg.SigningSecret == "" {
		return Config{}, false, nil
	}
	var errs []error
	if cfg.BotToken == "" {
		errs = append(errs, fmt.Errorf("%w: %s is required when %s or %s is set", ErrConfig, EnvBotToken, EnvAppToken, EnvSigningSecret))
	}
	if cfg.AppToken == "" && cfg.SigningSecret == "" {
		errs = append(errs, fmt.Errorf("%w: %s is set but neither %s (Socket Mode) nor %s (HTTP Events API) is", ErrConfig, EnvBotToken, EnvAppToken, EnvSigningSecret))
	}
	if v := strings.TrimSpace(getenv(EnvMaxAttachMB)); v != "" {
		mb, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || mb <= 0 || mb > 1<<20 {
			errs = append(errs, fmt.Errorf("%w: %s must be a positive number of megabytes, got %q", ErrConfig, EnvMaxAttachMB, v))
		} else {
			cfg.MaxAttachmentBytes = mb << 20
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, true, err
	}
	return cfg, true, nil
}

// HTTPMode reports whether the configuration selects the HTTP Events API.
func (c Config) HTTPMode() bool { return c.SigningSecret != "" }

// withDefaults validates c and fills in the zero values.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.BotToken == "" {
		errs = append(errs, fmt.Errorf("%w: BotToken (%s) is required", ErrConfig, EnvBotToken))
	} else if !strings.HasPrefix(c.BotToken, "xoxb-") {
		errs = append(errs, fmt.Errorf("%w: BotToken (%s) must be a bot token (xoxb-…)", ErrConfig, EnvBotToken))
	}
	if !c.HTTPMode() {
		if c.AppToken == "" {
			errs = append(errs, fmt.Errorf("%w: AppToken (%s) is required for Socket Mode; set %s for the HTTP Events API instead", ErrConfig, EnvAppToken, EnvSigningSecret))
		} else if !strings.HasPrefix(c.AppToken, "xapp-") {
			errs = append(errs, fmt.Errorf("%w: AppToken (%s) must be an app-level token (xapp-…)", ErrConfig, EnvAppToken))
		}
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("%w: APIURL (%s) must be an http(s) URL, got %q", ErrConfig, EnvAPIURL, c.APIURL))
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	switch {
	case c.MaxAttachmentBytes == 0:
		c.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	case c.MaxAttachmentBytes < 0:
		errs = append(errs, fmt.Errorf("%w: MaxAttachmentBytes must not be negative", ErrConfig))
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.MaxRetryWait <= 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	switch {
	case c.UpdateInterval == 0:
		c.UpdateInterval = DefaultUpdateInterval
	case c.UpdateInterval < 0:
		c.UpdateInterval = 0
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, errors.Join(errs...)
}
