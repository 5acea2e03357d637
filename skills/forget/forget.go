// Package forget is the forget skill: it deletes long-term memories by
// id, by query or by scope, within what this user may see here, and says
// what was deleted.
package forget

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/memskill"
)

//go:embed SKILL.md
var skillMD []byte

// maxByQuery caps how many memories one query-based forget deletes.
const maxByQuery = 5

// Store is the part of a long-term store the skill needs.
type Store interface {
	Search(ctx context.Context, q memory.Query) ([]memory.Hit, error)
	List(ctx context.Context, f memory.Filter, limit int) ([]memory.Record, error)
	Delete(ctx context.Context, f memory.Filter) (int, error)
}

// Config configures the skill.
type Config struct {
	// Store is the long-term store (required).
	Store Store
}

// Skill is forget. Safe for concurrent use when Store is.
type Skill struct {
	memskill.Base[Store] // Spec and Store
}

// New returns the skill; Config.Store is required.
func New(cfg Config) (*Skill, error) {
	b, err := memskill.NewBase("forget", cfg.Store, skillMD)
	if err != nil {
		return nil, err
	}
	return &Skill{b}, nil
}

type args struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	All   bool   `json:"all"`
	Scope string `json:"scope"`
}

// Run finds the memories to forget, deletes them and lists them.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if r, ok := memskill.DecodeArgs(c.Args, &a, `{"id": "3f2a9c1e"} or {"query": "..."}`); !ok {
		return r, nil
	}
	a.ID, a.Query = strings.TrimSpace(a.ID), strings.TrimSpace(a.Query)
	given := 0
	for _, b := range []bool{a.ID != "", a.Query != "", a.All} {
		if b {
			given++
		}
	}
	if given != 1 {
		return skills.Errorf(`give exactly one of "id" (from search-memory), "query", or "all": true with a scope`), nil
	}
	sc, err := memskill.Scope(c.Env, a.Scope)
	if err != nil {
		return skills.Errorf("%v", err), nil
	}
	var victims []memory.Record
	switch {
	case a.ID != "":
		if len(a.ID) < 8 {
			return skills.Errorf("id %q is too short; give at least the 8 characters search-memory shows", a.ID), nil
		}
		all, err := s.Store().List(ctx, memory.Filter{Scope: sc}, 0)
		if err != nil {
			return memskill.Fail("forget", err)
		}
		for _, r := range all {
			if strings.HasPrefix(r.ID, a.ID) && memskill.Keep(r, a.Scope) {
				victims = append(victims, r)
			}
		}
		if len(victims) == 0 {
			return skills.Errorf("no memory with id %q is visible here; use search-memory to find its id", a.ID), nil
		}
		if len(victims) > 1 {
			return skills.Errorf("id %q matches %d memories; give more characters", a.ID, len(victims)), nil
		}
	case a.Query != "":
		hits, err := s.Store().Search(ctx, memory.Query{Scope: sc, Text: a.Query, Limit: memory.MaxLimit})
		if err != nil {
			return memskill.Fail("forget", err)
		}
		for _, h := range hits {
			if memskill.Keep(h.Record, a.Scope) && len(victims) < maxByQuery {
				victims = append(victims, h.Record)
			}
		}
	default:
		all, err := s.Store().List(ctx, memory.Filter{Scope: sc}, 0)
		if err != nil {
			return memskill.Fail("forget", err)
		}
		for _, r := range all {
			if memskill.Keep(r, a.Scope) {
				victims = append(victims, r)
			}
		}
	}
	if len(victims) == 0 {
		return skills.Result{Status: skills.StatusOK, Output: "Nothing to forget: no memory matches.", Metadata: map[string]any{"deleted": 0}}, nil
	}
	ids := make([]string, len(victims))
	for i, r := range victims {
		ids[i] = r.ID
	}
	n, err := s.Store().Delete(ctx, memory.Filter{Scope: sc, IDs: ids})
	if err != nil {
		return memskill.Fail("forget", err)
	}
	var b strings.Builder
	noun := "memories"
	if n == 1 {
		noun = "memory"
	}
	fmt.Fprintf(&b, "Forgot %d %s:", n, noun)
	for _, r := range victims {
		b.WriteString("\n" + r.Line())
	}
	if n != len(victims) {
		fmt.Fprintf(&b, "\n(%d of them were already gone.)", len(victims)-n)
	}
	return skills.Result{Status: skills.StatusOK, Output: b.String(), Metadata: map[string]any{"deleted": n, "ids": ids}}, nil
}
