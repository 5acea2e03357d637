// Package bot holds the platform-neutral shapes of a conversation (Message,
// Attachment, Reply), the Adapter contract the Slack, Feishu and local
// adapters implement, and the Router that turns platform events into ordered
// agent runs.
package bot

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// Platform names used in session keys, job targets and metrics.
const (
	PlatformLocal  = "local"
	PlatformSlack  = "slack"
	PlatformFeishu = "feishu"
)

// Errors shared by adapters and the router.
var (
	// ErrDuplicate reports an event or message that was already accepted.
	ErrDuplicate = errors.New("duplicate event")
	// ErrNotForBot reports a message that is neither a mention, a DM nor a
	// reply in a thread that has a session.
	ErrNotForBot = errors.New("message is not addressed to the bot")
	// ErrQueueFull reports that the session's queue is at capacity.
	ErrQueueFull = errors.New("too many queued messages for this thread")
	// ErrTooLarge reports an attachment over the configured size cap.
	ErrTooLarge = errors.New("attachment exceeds the size limit")
	// ErrClosed reports a router that is shutting down.
	ErrClosed = errors.New("router is shutting down")
)

// Attachment is a reference to a file on the platform, not its bytes. The
// adapter that produced it knows how to open it (Adapter.Open).
type Attachment struct {
	ID   string `json:"id,omitempty"`   // platform file id / file_key
	Name string `json:"name"`           // file name as shown to people
	Size int64  `json:"size,omitempty"` // bytes, 0 when unknown
	MIME string `json:"mime,omitempty"`
	// URL is the platform download URL (Slack url_private_download). Never
	// logged: it may embed a token on some platforms.
	URL string `json:"-"`
	// Path is a local file path (local adapter, jobs). Adapters for remote
	// platforms leave it empty.
	Path string `json:"path,omitempty"`
	// MessageID is the platform message that carried the file (Feishu needs
	// it to download a resource).
	MessageID string `json:"message_id,omitempty"`
}

// Message is one inbound chat message, normalised by an adapter.
type Message struct {
	Platform string `json:"platform"`
	Tenant   string `json:"tenant"`  // Slack team id, Feishu tenant key, "local"
	Channel  string `json:"channel"` // channel / chat id
	// Thread is the id of the thread root. For a top-level message that
	// starts a thread it equals ID.
	Thread   string `json:"thread"`
	ID       string `json:"id"`       // platform message id (Slack ts, Feishu message_id)
	EventID  string `json:"event_id"` // platform event id, for dedupe; may be empty
	User     string `json:"user"`
	UserName string `json:"user_name,omitempty"`
	Text     string `json:"text"` // mention placeholders removed
	// DM is true in a direct conversation with the bot.
	DM bool `json:"dm,omitempty"`
	// Mentioned is true when the bot was @mentioned.
	Mentioned   bool         `json:"mentioned,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Time        time.Time    `json:"time"`
	// Link is a permalink to the thread when the platform gives one.
	Link string `json:"link,omitempty"`
}

// SessionKey derives the key of the conversation this message belongs to:
// platform + tenant + channel + thread root, or platform + tenant + user in
// a DM. Parts are joined with '/' after escaping '/' so keys never collide.
func (m Message) SessionKey() string {
	esc := func(s string) string { return strings.ReplaceAll(s, "/", "%2F") }
	if m.DM {
		return strings.Join([]string{esc(m.Platform), esc(m.Tenant), "dm", esc(m.User)}, "/")
	}
	thread := m.Thread
	if thread == "" {
		thread = m.ID
	}
	return strings.Join([]string{esc(m.Platform), esc(m.Tenant), esc(m.Channel), esc(thread)}, "/")
}

// Conversation addresses a place to post: a channel, optionally a thread.
type Conversation struct {
	Platform string `json:"platform"`
	Tenant   string `json:"tenant,omitempty"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread,omitempty"` // empty: a new top-level message
	// ReplyTo is the message being answered (Feishu replies to a message id).
	ReplyTo string `json:"reply_to,omitempty"`
}

// ConversationOf returns where a reply to m goes: the same thread.
func ConversationOf(m Message) Conversation {
	thread := m.Thread
	if thread == "" {
		thread = m.ID
	}
	return Conversation{Platform: m.Platform, Tenant: m.Tenant, Channel: m.Channel, Thread: thread, ReplyTo: m.ID}
}

// Evidence is one cited log line in an answer.
type Evidence struct {
	File   string `json:"file"`
	Line   int    `json:"line"` // 1-based, counts '\n' only
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
	// Verified is true when the agent checked that the line exists and says
	// what the answer claims.
	Verified bool `json:"verified"`
}

// Reply is an answer in a platform-neutral shape. Adapters render it (Block
// Kit, Feishu cards, plain text).
type Reply struct {
	// Text is the answer, conclusion first, in light markdown (**bold**,
	// `code`, "- " bullets). Always set.
	Text      string     `json:"text"`
	Evidence  []Evidence `json:"evidence,omitempty"`
	NextSteps []string   `json:"next_steps,omitempty"`
	// Report is an optional long report; adapters upload it as a file when
	// it is too long for a message.
	Report     string `json:"report,omitempty"`
	ReportName string `json:"report_name,omitempty"`
	// Failed marks an error reply (the run failed, input was rejected).
	Failed bool `json:"failed,omitempty"`
	// Steps and Tokens describe the run that produced the reply.
	Steps  int `json:"steps,omitempty"`
	Tokens int `json:"tokens,omitempty"`
}

// Progress shows a run's progress in the thread: a placeholder updated in
// place, a reaction, an assistant status. Implementations are safe for use
// by one run at a time and must not block long; errors are logged, not
// returned, because progress is best effort.
type Progress interface {
	// Update replaces the placeholder text ("step 2/5: reading app.log").
	Update(ctx context.Context, text string)
	// Finish delivers the final reply (replacing the placeholder where the
	// platform allows) and marks the original message done or failed. It
	// returns the id of the message that carries the answer.
	Finish(ctx context.Context, r Reply) (messageID string, err error)
}

// Adapter is one chat platform. The Router drives it.
type Adapter interface {
	// Platform returns the platform name (PlatformSlack, …).
	Platform() string
	// Run receives events until ctx is cancelled, acknowledging each at once
	// and handing normalised messages to in. It returns nil on a clean stop.
	Run(ctx context.Context, in Inbox) error
	// Post sends a reply to a conversation and returns the platform message
	// id. A message counts as delivered only when an id came back.
	Post(ctx context.Context, to Conversation, r Reply) (messageID string, err error)
	// Open streams an attachment's bytes.
	Open(ctx context.Context, a Attachment) (io.ReadCloser, error)
	// StartProgress acknowledges receipt of m (reaction, placeholder) and
	// returns the run's progress reporter.
	StartProgress(ctx context.Context, m Message) Progress
}

// Inbox accepts messages from adapters. Deliver returns quickly: it
// dedupes, decides whether the message is for the bot and queues it.
// It returns ErrDuplicate, ErrNotForBot, ErrQueueFull or ErrClosed for
// messages it does not queue.
type Inbox interface {
	Deliver(ctx context.Context, m Message) error
}

// Turn is one message handed to the agent.
type Turn struct {
	Message    Message
	SessionKey string
	// RunID names this run in every log line about it.
	RunID string
	// Open streams an attachment of this turn (the adapter's Open).
	Open func(ctx context.Context, a Attachment) (io.ReadCloser, error)
	// Progress reports progress; never nil.
	Progress func(text string)
}

// Runner answers a turn. agent.Agent implements it.
type Runner interface {
	Run(ctx context.Context, t Turn) (Reply, error)
}
