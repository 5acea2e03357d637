package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/local"
	"github.com/sleuth-bot/sleuth/jobs"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// core is what serve, `jobs run` and `eval` share: stores, skills, agent.
type core struct {
	cfg      Config
	env      *env
	log      *slog.Logger
	llm      *agent.LLMBrain // nil with the offline brain
	db       *memory.DB
	sessions memory.Sessions
	longTerm memory.LongTerm // nil when long-term memory is off
	registry *skills.Registry
	// skillProblems are the external skills skipped, with the reason.
	skillProblems []error
	agent         *agent.Agent
	jobs          *jobs.Scheduler // nil until started
	brain         string          // what answers: "offline" or provider/model
	memName       string          // long-term backend in words
	closers       []func() error
}

func (c *core) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	return errors.Join(errs...)
}

// buildCore opens the stores and builds the agent.
func buildCore(ctx context.Context, cfg Config, e *env, log *slog.Logger) (*core, error) {
	c := &core{cfg: cfg, env: e, log: log}
	db, err := memory.Open(ctx, memory.Config{DataDir: cfg.DataDir, Logger: log})
	if err != nil {
		return nil, err
	}
	c.db = db
	c.sessions = db.Sessions()
	c.closers = append(c.closers, db.Close)

	if err := buildMemory(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	brain, err := buildBrain(ctx, c)
	if err != nil {
		c.Close()
		return nil, err
	}
	reg, err := buildSkills(ctx, c)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.registry = reg
	a, err := agent.New(agent.Config{
		Registry:           reg,
		Sessions:           c.sessions,
		Memory:             c.longTerm,
		Brain:              brain,
		MaxAttachmentBytes: cfg.MaxAttachmentBytes,
		AllowSideEffects:   []string{"write-snapshot", "remember", "forget"},
		PersonaFile:        cfg.PersonaFile,
		AuditDir:           filepath.Join(cfg.DataDir, "audit"),
		Logger:             log,
		ValidateArgs:       skills.ValidateArgs,
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	c.agent = a
	c.closers = append(c.closers, a.Close)
	return c, nil
}

// cmdServe runs the bot until ctx is cancelled (SIGINT/SIGTERM), then shuts
// down gracefully: stop taking events, let running turns finish within the
// grace period, tell cut-off threads, flush and close the stores.
func cmdServe(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	e := newEnv(nil)
	cfg, err := loadConfig(e)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth: configuration:\n%s\n", indent(err.Error()))
		return 2
	}
	log := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	slog.SetDefault(log)
	if err := serve(ctx, cfg, e, stdin, stdout, log); err != nil {
		log.Error("sleuth stopped", "error", err)
		fmt.Fprintf(stderr, "sleuth: %v\n", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, cfg Config, e *env, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	c, err := buildCore(ctx, cfg, e, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Close(); err != nil {
			log.Error("close stores", "error", err)
		}
	}()

	router, err := bot.NewRouter(bot.RouterConfig{
		Runner: c.agent, Sessions: c.sessions, Workers: cfg.Workers,
		ShutdownGrace: cfg.ShutdownGrace, Logger: log,
	})
	if err != nil {
		return err
	}
	ready := newReadiness()
	ready.add("database", func(ctx context.Context) error { return c.db.SQL().PingContext(ctx) })
	if c.longTerm != nil {
		ready.add("memory", c.longTerm.Ping)
	}
	mux := http.NewServeMux()
	opsRoutes(mux, ready)

	platforms, err := buildPlatforms(ctx, c, e, mux, ready)
	if err != nil {
		return err
	}
	loc, err := local.New(local.Config{
		SpoolDir: filepath.Join(cfg.DataDir, "spool"), MaxAttachmentBytes: cfg.MaxAttachmentBytes,
		Out: stdout, Logger: log,
	})
	if err != nil {
		return err
	}
	// The local chat API has no authentication: with a platform configured
	// (a service reachable by others) it is served only when asked for.
	if len(platforms) == 0 || cfg.LocalAPI {
		loc.Routes(mux)
	}
	adapters := append(platforms, bot.Adapter(loc))
	for _, a := range adapters {
		router.Attach(a)
	}

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("SLEUTH_HTTP_ADDR=%s: %w", cfg.HTTPAddr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	jobsStop, err := startJobs(ctx, c, router, adapters)
	if err != nil {
		ln.Close()
		return err
	}
	defer jobsStop()

	terminal := len(platforms) == 0 && isTerminal(stdin)
	names := make([]string, 0, len(adapters))
	for _, a := range adapters {
		names = append(names, a.Platform())
	}
	log.Info("sleuth started",
		"platforms", strings.Join(names, ","), "http", "http://"+ln.Addr().String(),
		"model", c.brain, "memory", c.memName, "skills", len(c.registry.Names()),
		"jobs", jobsSummary(c), "terminal", terminal, "data_dir", cfg.DataDir)

	// stopCtx ends the bot (a signal, /quit, a fatal adapter error): the
	// router stops taking events and drains its running turns; then runCtx
	// stops the adapters and the HTTP server, so drained turns can still
	// deliver their replies.
	stopCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	var g errgroup.Group
	g.Go(func() error {
		err := router.Run(stopCtx)
		cancelRun()
		return err
	})
	for _, a := range adapters {
		g.Go(func() error {
			if err := a.Run(runCtx, router); err != nil && runCtx.Err() == nil {
				stopAll()
				return fmt.Errorf("%s: %w", a.Platform(), err)
			}
			return nil
		})
	}
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			stopAll()
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-runCtx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	if terminal {
		g.Go(func() error {
			err := loc.Terminal(stopCtx, stdin, stdout)
			stopAll() // /quit ends the process like a signal would
			return err
		})
	}
	err = g.Wait()
	log.Info("sleuth stopped")
	return err
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// dataPath joins p under the data dir unless it is absolute.
func dataPath(cfg Config, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cfg.DataDir, p)
}

var _ = os.Getenv
