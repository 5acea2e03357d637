package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/feishu"
	"github.com/sleuth-bot/sleuth/bot/local"
	"github.com/sleuth-bot/sleuth/bot/slack"
	"github.com/sleuth-bot/sleuth/jobs"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/builtin"
	"github.com/sleuth-bot/sleuth/skills/dailydigest"
	"github.com/sleuth-bot/sleuth/skills/forget"
	"github.com/sleuth-bot/sleuth/skills/remember"
	"github.com/sleuth-bot/sleuth/skills/searchmemory"
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
	list, err := builtin.Builtins(builtin.Config{Notes: c.sessions, KBDir: c.cfg.KBDir})
	if err != nil {
		return nil, err
	}
	if c.longTerm != nil {
		search, err := searchmemory.New(searchmemory.Config{Store: c.longTerm})
		if err != nil {
			return nil, err
		}
		rem, err := remember.New(remember.Config{Store: c.longTerm})
		if err != nil {
			return nil, err
		}
		forg, err := forget.New(forget.Config{Store: c.longTerm})
		if err != nil {
			return nil, err
		}
		list = append(list, search, rem, forg)
	}
	digest := dailydigest.Config{Sessions: c.sessions, Memories: c.longTerm, Logger: c.log}
	if c.llm != nil {
		digest.Narrator = c.llm
	}
	dd, err := dailydigest.New(digest)
	if err != nil {
		return nil, err
	}
	list = append(list, dd)
	if c.cfg.SkillsDir != "" {
		ext, problems := skills.LoadDir(c.cfg.SkillsDir)
		for _, p := range problems {
			// A broken external skill is reported and skipped; start-up
			// never fails because of one skill.
			c.log.Warn("external skill skipped", "dir", c.cfg.SkillsDir, "error", p)
		}
		c.skillProblems = problems
		list = append(list, ext...)
	}
	return skills.NewRegistry(list...)
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

// newScheduler builds the job scheduler on the core's stores, posting
// through the given adapters.
func newScheduler(c *core, adapters []bot.Adapter, busy func() bool) (*jobs.Scheduler, error) {
	st, err := jobs.ReadEnv(c.env.lookupResolved)
	if err != nil {
		return nil, err
	}
	defs, problems := jobs.Load(st.JobsFile)
	for _, p := range problems {
		// A bad definition is rejected with its name and reason; the
		// others still run.
		c.log.Error("job definition rejected", "error", p)
	}
	posters := map[string]jobs.Poster{}
	for _, a := range adapters {
		posters[a.Platform()] = a
	}
	s, err := jobs.New(jobs.Config{
		DB: c.db.SQL(), Defs: defs, Posters: posters, Skills: c.registry,
		Sessions: c.sessions, LongTerm: c.longTerm, DataDir: c.cfg.DataDir,
		ReportPaths: st.ReportPaths, OwnerTarget: st.OwnerTarget, Grace: st.Grace,
		Busy: busy, Logger: c.log,
	})
	if err != nil {
		return nil, err
	}
	c.jobs = s
	return s, nil
}

// startJobs starts the scheduler; the returned func stops it.
func startJobs(ctx context.Context, c *core, router *bot.Router, adapters []bot.Adapter) (func(), error) {
	s, err := newScheduler(c, adapters, router.Busy)
	if err != nil {
		return nil, err
	}
	jctx, cancel := context.WithCancel(ctx)
	if err := s.Start(jctx); err != nil {
		cancel()
		return nil, err
	}
	return func() { cancel(); s.Wait() }, nil
}

// jobsFromEnv builds the scheduler for `sleuth jobs` with serve's wiring
// (platform adapters post, but no events are received).
func jobsFromEnv(ctx context.Context) (*jobs.Scheduler, func(), error) {
	e := newEnv(nil)
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration:\n%s", indent(err.Error()))
	}
	log := newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
	c, err := buildCore(ctx, cfg, e, log)
	if err != nil {
		return nil, nil, err
	}
	adapters, err := buildPlatforms(ctx, c, e, http.NewServeMux(), newReadiness())
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	loc, err := local.New(local.Config{SpoolDir: filepath.Join(cfg.DataDir, "spool"), Out: os.Stdout, Logger: log})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	s, err := newScheduler(c, append(adapters, loc), nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return s, func() { c.Close() }, nil
}

func jobsSummary(c *core) string {
	if c.jobs == nil {
		return "off"
	}
	list, err := c.jobs.List(context.Background())
	if err != nil {
		return "error: " + err.Error()
	}
	names := make([]string, 0, len(list))
	for _, j := range list {
		names = append(names, j.Name)
	}
	return strings.Join(names, ",")
}
