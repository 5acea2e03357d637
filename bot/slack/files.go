package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/sleuth-bot/sleuth/bot"
)

// Attachment errors. Open wraps them with the file's name; the agent turns
// them into a reply in the thread.
var (
	// ErrFileGone reports a file that was deleted or has expired.
	ErrFileGone = errors.New("the file was deleted or has expired on Slack")
	// ErrFileAccess reports a file the bot token cannot read (missing
	// files:read, the bot is not in the channel, a Slack Connect policy).
	ErrFileAccess = errors.New("sleuth cannot read this file on Slack")
)

// slackFileDomains are the hosts a download may send the bot token to
// (besides the configured API host), as slack-go's GetFile allows.
var slackFileDomains = []string{"slack.com", "slack-edge.com", "slack-gov.com"}

// Open streams an attachment with the bot token. It refuses files over
// MaxAttachmentBytes with bot.ErrTooLarge — before downloading when the
// size is known, and while streaming otherwise. A file without a URL
// (Slack Connect "check_file_info") is looked up with files.info first.
// Errors wrap ErrFileGone, ErrFileAccess or bot.ErrTooLarge where they
// apply. (The agent counts the bytes it stores in metrics.AttachmentBytes.)
func (a *Adapter) Open(ctx context.Context, att bot.Attachment) (io.ReadCloser, error) {
	name := firstNonEmpty(att.Name, att.ID, "attachment")
	if err := a.checkSize(name, att.Size); err != nil {
		return nil, err
	}
	dl := att.URL
	if dl == "" {
		if att.ID == "" {
			return nil, fmt.Errorf("open %s: %w: no file id or URL", name, ErrFileAccess)
		}
		var f *slack.File
		err := a.call(ctx, "files.info", func(ctx context.Context) (err error) {
			f, _, _, err = a.api.GetFileInfoContext(ctx, att.ID, 0, 0)
			return err
		})
		switch {
		case isSlackErr(err, "file_not_found"), isSlackErr(err, "file_deleted"):
			return nil, fmt.Errorf("open %s: %w", name, ErrFileGone)
		case isSlackErr(err, "missing_scope"), isSlackErr(err, "not_authed"), isSlackErr(err, "access_denied"), isSlackErr(err, "no_permission"):
			return nil, fmt.Errorf("open %s: %w (%v)", name, ErrFileAccess, err)
		case err != nil:
			return nil, fmt.Errorf("open %s: %w", name, err)
		}
		if err := a.checkSize(name, int64(f.Size)); err != nil {
			return nil, err
		}
		dl = firstNonEmpty(f.URLPrivateDownload, f.URLPrivate)
		if dl == "" {
			return nil, fmt.Errorf("open %s: %w: files.info gave no download URL", name, ErrFileAccess)
		}
	}
	if err := a.tokenMayGoTo(dl); err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dl, nil)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.BotToken)
	resp, err := a.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("open %s: download: %w", name, err)
	}
	if err := downloadStatus(resp, req, att.MIME); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	if err := a.checkSize(name, resp.ContentLength); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return &cappedBody{rc: resp.Body, left: a.cfg.MaxAttachmentBytes, name: name, limit: a.cfg.MaxAttachmentBytes}, nil
}

// downloadStatus maps a download response to the attachment errors.
func downloadStatus(resp *http.Response, req *http.Request, wantMIME string) error {
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return ErrFileGone
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: HTTP %d", ErrFileAccess, resp.StatusCode)
	case resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("download: rate limited (retry after %s s)", resp.Header.Get("Retry-After"))
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	// Without access, files.slack.com redirects to the workspace sign-in
	// page (with redir set to the file path) and serves HTML instead of
	// the file.
	if final := resp.Request; final != nil && final.URL.String() != req.URL.String() {
		if redir := final.URL.Query().Get("redir"); redir != "" && redir == req.URL.Path {
			return fmt.Errorf("%w: redirected to the sign-in page", ErrFileAccess)
		}
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/html" && !strings.Contains(wantMIME, "html") {
		return fmt.Errorf("%w: Slack answered with an HTML page, not the file", ErrFileAccess)
	}
	return nil
}

// checkSize refuses a size over the cap (size <= 0 means unknown).
func (a *Adapter) checkSize(name string, size int64) error {
	if size > a.cfg.MaxAttachmentBytes {
		return fmt.Errorf("open %s: %w: %s, the limit is %s", name, bot.ErrTooLarge, humanSize(size), humanSize(a.cfg.MaxAttachmentBytes))
	}
	return nil
}

// tokenMayGoTo refuses to send the bot token anywhere but https Slack
// hosts or the configured API host.
func (a *Adapter) tokenMayGoTo(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: bad download URL", ErrFileAccess)
	}
	api, _ := url.Parse(a.cfg.APIURL)
	if api != nil && u.Scheme == api.Scheme && strings.EqualFold(u.Host, api.Host) {
		return nil
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "https" {
		for _, d := range slackFileDomains {
			if host == d || strings.HasSuffix(host, "."+d) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: refusing to send the token to %s", ErrFileAccess, u.Host)
}

// cappedBody streams a download and fails with bot.ErrTooLarge once more
// than limit bytes came through.
type cappedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	name  string
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, fmt.Errorf("open %s: %w: over %s", c.name, bot.ErrTooLarge, humanSize(c.limit))
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - int(-c.left), fmt.Errorf("open %s: %w: over %s", c.name, bot.ErrTooLarge, humanSize(c.limit))
	}
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }

// humanSize formats a byte count the way people read it: 12 MB, 800 KB.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d B", n)
	}
}
