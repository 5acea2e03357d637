package memory

import (
	"context"
	"time"
)

// Session is one conversation (a thread, or a DM).
type Session struct {
	Key      string `json:"key"`
	Platform string `json:"platform"`
	Tenant   string `json:"tenant"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread"`
	User     string `json:"user"` // who started it
	Link     string `json:"link,omitempty"`
	Summary  string `json:"summary,omitempty"` // rolling summary of older turns
	Plan     string `json:"plan,omitempty"`    // current multi-step plan
	// Status: "open" (last question answered), "waiting" (a turn is
	// queued or running), "failed" (last run failed), "interrupted".
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Turn is one entry of a session's history.
type Turn struct {
	ID        int64  `json:"id"`
	Session   string `json:"session"`
	Role      string `json:"role"` // "user", "assistant", "system"
	Content   string `json:"content"`
	MessageID string `json:"message_id,omitempty"`
	// Fingerprints are error-template ids found in this turn's analyses.
	Fingerprints []string  `json:"fingerprints,omitempty"`
	Tokens       int       `json:"tokens,omitempty"`
	Steps        int       `json:"steps,omitempty"`
	Failed       bool      `json:"failed,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// File is an attachment stored in a session's workspace.
type File struct {
	Session    string    `json:"session"`
	Name       string    `json:"name"` // unique within the session
	Path       string    `json:"path"` // absolute path on disk
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
	PlatformID string    `json:"platform_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// Note is a working note (write-snapshot).
type Note struct {
	Session   string    `json:"session"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

// Sessions is the session store: short-term and working memory that
// survives restarts. Safe for concurrent use.
type Sessions interface {
	// Ensure returns the session, creating it from s when missing.
	Ensure(ctx context.Context, s Session) (Session, error)
	Get(ctx context.Context, key string) (Session, error) // ErrNotFound
	Exists(ctx context.Context, key string) (bool, error)
	SetStatus(ctx context.Context, key, status string) error
	SetSummary(ctx context.Context, key, summary string) error
	SetPlan(ctx context.Context, key, plan string) error
	AppendTurn(ctx context.Context, t Turn) (Turn, error)
	// Turns returns the last limit turns in order (limit <= 0: all).
	Turns(ctx context.Context, key string, limit int) ([]Turn, error)
	AddFile(ctx context.Context, f File) error
	Files(ctx context.Context, key string) ([]File, error)
	AddNote(ctx context.Context, n Note) error
	Notes(ctx context.Context, key string) ([]Note, error)
	// Workspace returns the session's files directory, creating it.
	Workspace(key string) (string, error)
	// ListSessions returns sessions of a tenant+channel updated in [from, to).
	ListSessions(ctx context.Context, platform, tenant, channel string, from, to time.Time) ([]Session, error)
	// Claim records key once: it returns true the first time and false for
	// a duplicate, persistently (dedupe of event and message ids).
	Claim(ctx context.Context, key string) (bool, error)
}
