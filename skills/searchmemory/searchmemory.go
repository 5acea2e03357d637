// Package searchmemory is the search-memory skill: it searches (or lists)
// the long-term memories this user may see here.
package searchmemory

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

// Store is the part of a long-term store the skill needs.
type Store interface {
	Search(ctx context.Context, q memory.Query) ([]memory.Hit, error)
	List(ctx context.Context, f memory.Filter, limit int) ([]memory.Record, error)
}

// Config configures the skill.
type Config struct {
	// Store is the long-term store (required).
	Store Store
}

// Skill is search-memory. Safe for concurrent use when Store is.
type Skill struct {
	memskill.Base[Store] // Spec and Store
}

// New returns the skill; Config.Store is required.
func New(cfg Config) (*Skill, error) {
	b, err := memskill.NewBase("search-memory", cfg.Store, skillMD)
	if err != nil {
		return nil, err
	}
	return &Skill{b}, nil
}

type args struct {
	Query string `json:"query"`
	Scope string `json:"scope"`
	Type  string `json:"type"`
	Limit int    `json:"limit"`
}

// Run searches (with a query) or lists (without).
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if r, ok := memskill.DecodeArgs(c.Args, &a, `{"query": "..."}`); !ok {
		return r, nil
	}
	sc, err := memskill.Scope(c.Env, a.Scope)
	if err != nil {
		return skills.Errorf("%v", err), nil
	}
	if a.Limit <= 0 {
		a.Limit = memory.DefaultLimit
	}
	a.Limit = min(a.Limit, 20)
	var types []string
	if a.Type != "" {
		if !memory.ValidType(a.Type) {
			return skills.Errorf("type %q is not one of preference, fact, incident, task_result", a.Type), nil
		}
		types = []string{a.Type}
	}
	var recs []memory.Record
	var scores []float32
	if strings.TrimSpace(a.Query) == "" {
		recs, err = s.Store().List(ctx, memory.Filter{Scope: sc, Types: types}, 0)
	} else {
		var hits []memory.Hit
		hits, err = s.Store().Search(ctx, memory.Query{Scope: sc, Text: a.Query, Types: types, Limit: memory.MaxLimit})
		for _, h := range hits {
			recs = append(recs, h.Record)
			scores = append(scores, h.Score)
		}
	}
	if err != nil {
		return memskill.Fail("search-memory", err)
	}
	var keptR []memory.Record
	var keptS []float32
	for i, r := range recs {
		if memskill.Keep(r, a.Scope) {
			keptR = append(keptR, r)
			if i < len(scores) {
				keptS = append(keptS, scores[i])
			}
		}
	}
	recs, scores = keptR, keptS
	if len(recs) > a.Limit {
		recs = recs[:a.Limit]
	}
	if len(recs) == 0 {
		if a.Query == "" {
			return skills.Result{Status: skills.StatusOK, Output: "No memories here yet.", Metadata: map[string]any{"count": 0}}, nil
		}
		return skills.Result{Status: skills.StatusOK, Output: "No memories match.", Metadata: map[string]any{"count": 0}}, nil
	}
	var b strings.Builder
	for i, r := range recs {
		b.WriteString(r.Line())
		if i < len(scores) {
			fmt.Fprintf(&b, " score %.2f", scores[i])
		}
		b.WriteByte('\n')
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return skills.Result{Status: skills.StatusOK, Output: strings.TrimRight(b.String(), "\n"), Metadata: map[string]any{"count": len(recs), "ids": ids}}, nil
}
