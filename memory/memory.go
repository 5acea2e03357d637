// Package memory holds what sleuth remembers: sessions (short-term history,
// attachments, working notes), persistent dedupe keys, and long-term
// memories (summarised facts, preferences and incidents) scoped per user and
// per channel. The embedded store (a pure-Go SQLite file under the data
// directory) is the default; memory/qdrant stores long-term memories in
// Qdrant when QDRANT_URL is set.
package memory

import (
	"context"
	"errors"
	"time"
)

// Errors.
var (
	// ErrNotFound reports a missing session or record.
	ErrNotFound = errors.New("not found")
	// ErrScope reports a query without a valid scope (no tenant, or a user
	// scope without a user, or a channel scope without a channel).
	ErrScope = errors.New("memory scope is incomplete")
	// ErrDimension reports an embedder whose dimension differs from the one
	// the store was created with.
	ErrDimension = errors.New("embedding dimension mismatch")
	// ErrUnavailable reports a long-term store that cannot be reached.
	ErrUnavailable = errors.New("memory store unavailable")
)

// Scope kinds of long-term memories.
const (
	ScopeUser    = "user"
	ScopeChannel = "channel"
)

// Memory types.
const (
	TypePreference = "preference"
	TypeFact       = "fact"
	TypeIncident   = "incident"
	TypeTaskResult = "task_result"
)

// Scope says whose memories a query may touch. The store builds its filter
// from it: tenant always; user memories only for User; channel memories
// only for Channel. A DM has no channel, so channel memories never appear
// in it, and DM (user) memories are never returned for a channel-only
// scope.
type Scope struct {
	Tenant  string
	User    string // empty: no user memories
	Channel string // empty (DMs): no channel memories
}

// Source says where a memory came from.
type Source struct {
	Session string `json:"session,omitempty"`
	Skill   string `json:"skill,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Link    string `json:"link,omitempty"` // thread permalink, when known
}

// Record is one long-term memory.
type Record struct {
	ID       string `json:"id"`
	Tenant   string `json:"tenant"`
	User     string `json:"user,omitempty"`
	Channel  string `json:"channel,omitempty"`
	Scope    string `json:"scope"` // ScopeUser | ScopeChannel
	Type     string `json:"type"`
	Priority int    `json:"priority"` // 0–5
	Content  string `json:"content"`  // short, distilled, redacted
	// Fingerprints are error-template ids this memory is about (incidents).
	Fingerprints []string  `json:"fingerprints,omitempty"`
	Source       Source    `json:"source"`
	CreatedAt    time.Time `json:"created_at"`
	Vector       []float32 `json:"-"`
}

// Hit is a search result.
type Hit struct {
	Record
	Score float32 `json:"score"`
}

// Query is a long-term search.
type Query struct {
	Scope Scope
	Text  string // embedded by the store's embedder when Vector is nil
	// Vector is the query vector; nil means embed Text.
	Vector []float32
	Limit  int // default 5
	// MinScore overrides the embedder's default threshold when > 0.
	MinScore    float32
	Types       []string // empty: all
	MinPriority int
	// Fingerprint restricts to incidents carrying this template id.
	Fingerprint string
}

// Filter selects records for List, Delete and cleanup; Scope is required.
type Filter struct {
	Scope         Scope
	IDs           []string
	Types         []string
	MaxPriority   *int      // priority <= *MaxPriority
	CreatedBefore time.Time // zero: no bound
	CreatedAfter  time.Time // zero: no bound
	Fingerprint   string
}

// LongTerm is a long-term memory store. Every method takes a scope and the
// store enforces it: callers cannot widen it. Implementations are safe for
// concurrent use.
type LongTerm interface {
	// Add embeds (when Vector is nil), assigns ID and CreatedAt when empty,
	// and stores the records.
	Add(ctx context.Context, recs ...Record) error
	Search(ctx context.Context, q Query) ([]Hit, error)
	List(ctx context.Context, f Filter, limit int) ([]Record, error)
	// Delete removes matching records and returns how many.
	Delete(ctx context.Context, f Filter) (int, error)
	// Cleanup removes, across all tenants, records with priority <= maxPriority
	// older than olderThan, and records past their type's TTL. It is for the
	// nightly job only.
	Cleanup(ctx context.Context, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) (int, error)
	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// Embedder turns text into vectors of a fixed dimension.
type Embedder interface {
	Name() string
	Dimension() int
	// MinScore is the default similarity threshold for this embedder.
	MinScore() float32
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
