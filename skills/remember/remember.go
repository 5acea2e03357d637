// Package remember is the remember skill: it writes one long-term memory
// in the turn's scope, redacted before it is stored.
package remember

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/memskill"
)

//go:embed SKILL.md
var skillMD []byte

// MaxContentChars is the longest memory accepted (also in SKILL.md).
const MaxContentChars = 500

// Store is the part of a long-term store the skill needs.
type Store interface {
	Add(ctx context.Context, recs ...memory.Record) error
}

// Config configures the skill.
type Config struct {
	// Store is the long-term store (required).
	Store Store
}

// Skill is remember. Safe for concurrent use when Store is.
type Skill struct {
	memskill.Base[Store] // Spec and Store
}

// New returns the skill; Config.Store is required.
func New(cfg Config) (*Skill, error) {
	b, err := memskill.NewBase("remember", cfg.Store, skillMD)
	if err != nil {
		return nil, err
	}
	return &Skill{b}, nil
}

type args struct {
	Content  string `json:"content"`
	Type     string `json:"type"`
	Scope    string `json:"scope"`
	Priority *int   `json:"priority"`
}

// Run stores the memory and reports what was stored (redacted).
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return skills.Errorf(`arguments must be a JSON object like {"content": "...", "type": "fact"}: %v`, err), nil
	}
	a.Content = strings.TrimSpace(a.Content)
	switch n := utf8.RuneCountInString(a.Content); {
	case n < 3:
		return skills.Errorf("content is required: one or two distilled sentences"), nil
	case n > MaxContentChars:
		return skills.Errorf("content is %d characters; distil it to at most %d (cite lines instead of copying them)", n, MaxContentChars), nil
	}
	if a.Type == "" {
		a.Type = memory.TypeFact
	}
	if !memory.ValidType(a.Type) {
		return skills.Errorf("type %q is not one of preference, fact, incident, task_result", a.Type), nil
	}
	switch {
	case a.Scope == "" && (c.Env.Channel == "" || a.Type == memory.TypePreference):
		a.Scope = memory.ScopeUser
	case a.Scope == "":
		a.Scope = memory.ScopeChannel
	case a.Scope != memory.ScopeUser && a.Scope != memory.ScopeChannel:
		return skills.Errorf("scope %q is not user or channel", a.Scope), nil
	}
	if a.Scope == memory.ScopeChannel && c.Env.Channel == "" {
		return skills.Errorf("this is a DM: there is no channel, so remember it with scope user"), nil
	}
	prio := 3
	if a.Priority != nil {
		prio = *a.Priority
	}
	if prio < 0 || prio > memory.MaxPriority {
		return skills.Errorf("priority %d is outside 0..5", prio), nil
	}
	rec := memory.Record{
		Tenant: c.Env.Tenant, User: c.Env.User, Channel: c.Env.Channel, Scope: a.Scope, Type: a.Type, Priority: prio,
		Content: a.Content, Source: memory.Source{Session: c.Env.SessionKey, Skill: "remember", Link: c.Env.Link},
	}
	if a.Scope == memory.ScopeUser && c.Env.DM {
		rec.Channel = ""
	}
	// Prepare here so the reply can show the id and the redacted text.
	rec, err := memory.Prepare(rec, time.Now())
	if err != nil {
		return memskill.Fail("remember", err)
	}
	if err := s.Store().Add(ctx, rec); err != nil {
		return memskill.Fail("remember", err)
	}
	out := fmt.Sprintf("Remembered (%s memory, %s, priority %d) [%s]: %s", rec.Scope, rec.Type, rec.Priority, memory.ShortID(rec.ID), rec.Content)
	if rec.Content != a.Content {
		out += "\n(Secrets were replaced by [REDACTED] before storing.)"
	}
	return skills.Result{Status: skills.StatusOK, Output: out, Metadata: map[string]any{"id": rec.ID, "scope": rec.Scope, "type": rec.Type}}, nil
}
