package eval

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/sleuth-bot/sleuth/agent"
	"github.com/sleuth-bot/sleuth/agent/llmtest"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/builtin"
	"github.com/sleuth-bot/sleuth/skills/forget"
	"github.com/sleuth-bot/sleuth/skills/remember"
	"github.com/sleuth-bot/sleuth/skills/searchmemory"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testCore mirrors cmd/sleuth's buildCore with the real built-in and
// memory skills, the embedded long-term store, and the LLM brain pointed
// at srv (nil: the offline brain).
func testCore(t testing.TB, srv *llmtest.Server) func(ctx context.Context, env CoreEnv) (*Core, error) {
	return func(ctx context.Context, env CoreEnv) (*Core, error) {
		log := discard()
		db, err := memory.Open(ctx, memory.Config{DataDir: env.DataDir, Logger: log})
		if err != nil {
			return nil, err
		}
		closers := []func() error{db.Close}
		closeAll := func() error {
			var first error
			for i := len(closers) - 1; i >= 0; i-- {
				if err := closers[i](); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
		emb, err := memory.NewHashEmbedder(256)
		if err != nil {
			closeAll()
			return nil, err
		}
		lt, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: emb, Logger: log})
		if err != nil {
			closeAll()
			return nil, err
		}
		closers = append(closers, lt.Close)
		list, err := builtin.Builtins(builtin.Config{Notes: db.Sessions()})
		if err != nil {
			closeAll()
			return nil, err
		}
		sm, err1 := searchmemory.New(searchmemory.Config{Store: lt})
		rm, err2 := remember.New(remember.Config{Store: lt})
		fg, err3 := forget.New(forget.Config{Store: lt})
		for _, e := range []error{err1, err2, err3} {
			if e != nil {
				closeAll()
				return nil, e
			}
		}
		list = append(list, sm, rm, fg)
		reg, err := skills.NewRegistry(list...)
		if err != nil {
			closeAll()
			return nil, err
		}
		var brain agent.Brain
		name := "offline"
		if srv != nil && !env.Offline {
			env := map[string]string{"LLM_BASE_URL": srv.URL, "LLM_MODEL": "scripted", "LLM_API_KEY": "test"}
			b, err := agent.NewLLMFromEnv(func(k string) string { return env[k] }, log)
			if err != nil {
				closeAll()
				return nil, err
			}
			brain, name = b, b.Name()
		}
		a, err := agent.New(agent.Config{
			Registry: reg, Sessions: db.Sessions(), Memory: lt, Brain: brain,
			AllowSideEffects: []string{"write-snapshot", "remember", "forget"},
			AuditDir:         filepath.Join(env.DataDir, "audit"), Logger: log,
		})
		if err != nil {
			closeAll()
			return nil, err
		}
		closers = append(closers, a.Close)
		return &Core{
			Runner: a, Sessions: db.Sessions(), Brain: name,
			SideEffect: func(n string) bool {
				s, ok := reg.Get(n)
				return ok && s.Spec().SideEffects
			},
			Close: closeAll,
		}, nil
	}
}

func newRunner(t testing.TB, srv *llmtest.Server) *Runner {
	t.Helper()
	r, err := New(Config{NewCore: testCore(t, srv), WorkDir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func loadShipped(t testing.TB) []Task {
	t.Helper()
	tasks, err := Load(Shipped())
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func taskNamed(t testing.TB, tasks []Task, name string) *Task {
	t.Helper()
	for i := range tasks {
		if tasks[i].Name == name {
			return &tasks[i]
		}
	}
	t.Fatalf("no task %q", name)
	return nil
}
