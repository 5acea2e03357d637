package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/sleuth-bot/sleuth/bot"
)

// ErrNotDelivered reports a post for which Slack returned no message ts.
var ErrNotDelivered = errors.New("slack: message not delivered")

// Post renders r as Block Kit and posts it to the conversation (in the
// thread when to.Thread is set), then uploads a long report into the same
// thread. It returns the ts of the message; an upload failure is logged,
// not returned, because the answer itself was delivered.
func (a *Adapter) Post(ctx context.Context, to bot.Conversation, r bot.Reply) (string, error) {
	if to.Channel == "" {
		return "", fmt.Errorf("post: %w: no channel", ErrNotDelivered)
	}
	out := renderReply(r)
	ts, err := a.postBlocks(ctx, to.Channel, to.Thread, out)
	if err != nil {
		return "", err
	}
	a.uploadAll(ctx, to.Channel, firstNonEmpty(to.Thread, ts), out.Uploads)
	return ts, nil
}

func (a *Adapter) postBlocks(ctx context.Context, channel, thread string, out rendered) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(out.Fallback, false), slack.MsgOptionBlocks(out.Blocks...)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := a.call(ctx, "chat.postMessage", func(ctx context.Context) (err error) {
		_, ts, err = a.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("post: %w", err)
	}
	if ts == "" {
		return "", fmt.Errorf("post: %w", ErrNotDelivered)
	}
	return ts, nil
}

// uploadAll puts files into the thread with the current upload flow
// (files.getUploadURLExternal → upload → files.completeUploadExternal).
func (a *Adapter) uploadAll(ctx context.Context, channel, thread string, ups []upload) {
	for _, u := range ups {
		if u.Content == "" {
			continue
		}
		err := a.call(ctx, "files.upload", func(ctx context.Context) error {
			_, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{
				Filename:        u.Name,
				Title:           u.Title,
				FileSize:        len(u.Content),
				Content:         u.Content,
				Channel:         channel,
				ThreadTimestamp: thread,
			})
			return err
		})
		if err != nil {
			a.log.Warn("slack: report upload failed", "file", u.Name, "error", err)
		}
	}
}

// StartProgress reacts with 👀 on m, posts a placeholder in its thread
// ("Reading app.log, 12 MB…") and, in an assistant thread, sets the
// thread status. Each step is best effort: failures are logged.
func (a *Adapter) StartProgress(ctx context.Context, m bot.Message) bot.Progress {
	p := &progress{
		a:         a,
		channel:   m.Channel,
		msg:       m.ID,
		thread:    replyThread(m),
		assistant: m.Thread != "" && a.assistant.has(m.Channel, m.Thread),
	}
	if m.ID != "" {
		p.react(ctx, reactionSeen)
	}
	text := placeholderText(m)
	if p.assistant {
		p.status(ctx, "is "+strings.ToLower(text[:1])+text[1:])
	}
	out := rendered{Fallback: text, Blocks: []slack.Block{
		slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, ":hourglass_flowing_sand: "+escape(text), false, false)),
	}}
	ts, err := a.postBlocks(ctx, m.Channel, p.thread, out)
	if err != nil {
		a.log.Warn("slack: placeholder failed", "channel", m.Channel, "error", err)
	}
	p.placeholder = ts
	p.last = time.Now()
	return p
}

// replyThread is where answers to m go: its thread, except a top-level
// DM, which is answered at top level like a chat.
func replyThread(m bot.Message) string {
	if m.DM && (m.Thread == "" || m.Thread == m.ID) {
		return ""
	}
	return firstNonEmpty(m.Thread, m.ID)
}

// placeholderText says what sleuth is about to do with m.
func placeholderText(m bot.Message) string {
	switch n := len(m.Attachments); {
	case n == 1:
		at := m.Attachments[0]
		if at.Size > 0 {
			return fmt.Sprintf("Reading %s, %s…", at.Name, humanSize(at.Size))
		}
		return fmt.Sprintf("Reading %s…", at.Name)
	case n > 1:
		var total int64
		for _, at := range m.Attachments {
			total += at.Size
		}
		if total > 0 {
			return fmt.Sprintf("Reading %d files, %s…", n, humanSize(total))
		}
		return fmt.Sprintf("Reading %d files…", n)
	}
	return "Looking into it…"
}

// progress is one run's placeholder, reactions and assistant status.
type progress struct {
	a           *Adapter
	channel     string
	msg         string // the message being answered
	thread      string // where the answer goes ("" = top level)
	assistant   bool
	mu          sync.Mutex
	placeholder string // ts of the placeholder, "" when none
	last        time.Time
	finished    bool
}

// Update replaces the placeholder's text, at most once per
// UpdateInterval (chat.update is rate limited); skipped updates are
// dropped, since a newer one follows.
func (p *progress) Update(ctx context.Context, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text = strings.TrimSpace(text)
	if p.finished || text == "" || time.Since(p.last) < p.a.cfg.UpdateInterval {
		return
	}
	p.last = time.Now()
	if p.assistant {
		p.status(ctx, text)
	}
	if p.placeholder == "" {
		return
	}
	text = cut(text, maxSectionText-40)
	err := p.a.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := p.a.api.UpdateMessageContext(ctx, p.channel, p.placeholder,
			slack.MsgOptionText(text, false),
			slack.MsgOptionBlocks(slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, ":hourglass_flowing_sand: "+escape(text), false, false))))
		return err
	})
	if err != nil {
		p.a.log.Warn("slack: progress update failed", "error", err)
	}
}

// Finish replaces the placeholder with the answer (or posts it when there
// is no placeholder or the update fails), uploads a long report into the
// thread, and swaps 👀 for ✅ or ❌.
func (p *progress) Finish(ctx context.Context, r bot.Reply) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = true
	out := renderReply(r)
	ts := ""
	if p.placeholder != "" {
		err := p.a.call(ctx, "chat.update", func(ctx context.Context) error {
			_, _, _, err := p.a.api.UpdateMessageContext(ctx, p.channel, p.placeholder,
				slack.MsgOptionText(out.Fallback, false), slack.MsgOptionBlocks(out.Blocks...))
			return err
		})
		if err == nil {
			ts = p.placeholder
		} else {
			p.a.log.Warn("slack: replacing the placeholder failed; posting the answer", "error", err)
		}
	}
	var postErr error
	if ts == "" {
		ts, postErr = p.a.postBlocks(ctx, p.channel, p.thread, out)
	}
	if postErr == nil {
		p.a.uploadAll(ctx, p.channel, firstNonEmpty(p.thread, ts), out.Uploads)
	}
	if p.assistant {
		p.status(ctx, "")
	}
	if p.msg != "" {
		p.unreact(ctx, reactionSeen)
		if r.Failed || postErr != nil {
			p.react(ctx, reactionFailed)
		} else {
			p.react(ctx, reactionDone)
		}
	}
	if postErr != nil {
		return "", postErr
	}
	return ts, nil
}

func (p *progress) react(ctx context.Context, name string) {
	err := p.a.call(ctx, "reactions.add", func(ctx context.Context) error {
		return p.a.api.AddReactionContext(ctx, name, slack.NewRefToMessage(p.channel, p.msg))
	})
	if err != nil && !isSlackErr(err, "already_reacted") {
		p.a.log.Warn("slack: reaction failed", "reaction", name, "error", err)
	}
}

func (p *progress) unreact(ctx context.Context, name string) {
	err := p.a.call(ctx, "reactions.remove", func(ctx context.Context) error {
		return p.a.api.RemoveReactionContext(ctx, name, slack.NewRefToMessage(p.channel, p.msg))
	})
	if err != nil && !isSlackErr(err, "no_reaction") {
		p.a.log.Debug("slack: removing reaction failed", "reaction", name, "error", err)
	}
}

// status sets the assistant thread status ("" clears it).
func (p *progress) status(ctx context.Context, text string) {
	if text != "" {
		text = cut(text, maxStatusText)
	}
	err := p.a.call(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
		return p.a.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: p.channel, ThreadTS: p.thread, Status: text,
		})
	})
	if err != nil {
		p.a.log.Debug("slack: assistant status failed", "error", err)
	}
}
