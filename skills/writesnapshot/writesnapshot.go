// Package writesnapshot is the write-snapshot skill: working notes of one
// conversation, stored with its session.
package writesnapshot

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

//go:embed SKILL.md
var skillMD []byte

// Limits.
const (
	// MaxNoteChars is the longest note accepted (also in SKILL.md).
	MaxNoteChars = 2000
	// readNotes is how many of the latest notes a read returns.
	readNotes = 20
)

// ErrNoNotes reports a Config without a notes store.
var ErrNoNotes = errors.New("write-snapshot: Config.Notes is required")

// Notes is the part of the session store the skill needs; memory.Sessions
// satisfies it.
type Notes interface {
	AddNote(ctx context.Context, n memory.Note) error
	Notes(ctx context.Context, key string) ([]memory.Note, error)
}

// Config configures the skill.
type Config struct {
	// Notes stores the notes (required).
	Notes Notes
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Skill is write-snapshot. Safe for concurrent use when Notes is.
type Skill struct {
	cfg  Config
	spec skills.Spec
}

// New returns the skill.
func New(cfg Config) (*Skill, error) {
	if cfg.Notes == nil {
		return nil, ErrNoNotes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("write-snapshot SKILL.md: %w", err)
	}
	return &Skill{cfg: cfg, spec: spec}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

type args struct {
	Action  string `json:"action"`
	Content string `json:"content"`
}

// Run writes or reads notes. A store failure is a Go error.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &a); !ok {
		return r, nil
	}
	if c.Env.SessionKey == "" {
		return skills.Result{}, errors.New("write-snapshot: the call has no session")
	}
	switch strings.ToLower(a.Action) {
	case "", "write":
		return s.write(ctx, c.Env.SessionKey, a.Content)
	case "read":
		return s.read(ctx, c.Env.SessionKey)
	}
	return skills.Errorf("action %q is unknown; use \"write\" or \"read\"", a.Action), nil
}

func (s *Skill) write(ctx context.Context, key, content string) (skills.Result, error) {
	content = strings.TrimSpace(content)
	switch n := utf8.RuneCountInString(content); {
	case n == 0:
		return skills.Errorf("content is empty; write the note in \"content\", or use \"action\": \"read\""), nil
	case n > MaxNoteChars:
		return skills.Errorf("the note has %d characters; the limit is %d. Distil it: findings and line references, not log lines", n, MaxNoteChars), nil
	}
	if err := s.cfg.Notes.AddNote(ctx, memory.Note{Session: key, Content: content, CreatedAt: s.cfg.Now().UTC()}); err != nil {
		return skills.Result{}, fmt.Errorf("write-snapshot: add note: %w", err)
	}
	notes, err := s.cfg.Notes.Notes(ctx, key)
	if err != nil {
		return skills.Result{}, fmt.Errorf("write-snapshot: notes: %w", err)
	}
	return skills.Result{
		Status:   skills.StatusOK,
		Output:   fmt.Sprintf("Noted (%d notes in this conversation).", len(notes)),
		Metadata: map[string]any{"notes": len(notes), "chars": len(content)},
	}, nil
}

func (s *Skill) read(ctx context.Context, key string) (skills.Result, error) {
	notes, err := s.cfg.Notes.Notes(ctx, key)
	if err != nil {
		return skills.Result{}, fmt.Errorf("write-snapshot: notes: %w", err)
	}
	if len(notes) == 0 {
		return skills.Result{Status: skills.StatusOK, Output: "No notes in this conversation yet.", Metadata: map[string]any{"notes": 0}}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d notes in this conversation", len(notes))
	shown := notes
	if len(shown) > readNotes {
		shown = shown[len(shown)-readNotes:]
		fmt.Fprintf(&b, " (the latest %d)", readNotes)
	}
	b.WriteString(":\n")
	for i, n := range shown {
		fmt.Fprintf(&b, "%d. [%s] %s\n", len(notes)-len(shown)+i+1, n.CreatedAt.UTC().Format("2006-01-02 15:04"), n.Content)
	}
	return skills.Result{Status: skills.StatusOK, Output: strings.TrimRight(b.String(), "\n"), Metadata: map[string]any{"notes": len(notes)}}, nil
}
