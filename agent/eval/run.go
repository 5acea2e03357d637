package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/local"
	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
)

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("eval: invalid config")

// Core is what one task runs against: the agent and its stores, built
// fresh in an empty data dir.
type Core struct {
	// Runner answers turns (the agent). Required.
	Runner bot.Runner
	// Sessions is the session store the router dedupes with. Required.
	Sessions memory.Sessions
	// Brain names what answers ("offline", "openai:gpt-4o-mini").
	Brain string
	// AuditDir holds the agent's audit JSONL, read for the skills called.
	// Optional: empty means <data dir>/audit.
	AuditDir string
	// SideEffect reports whether a skill changes things outside the
	// thread. Optional: nil means only ForbidSkills are checked.
	SideEffect func(skill string) bool
	// Close releases the core. Optional.
	Close func() error
}

// CoreEnv says how to build a Core.
type CoreEnv struct {
	// DataDir is a fresh, empty directory for this task's stores.
	DataDir string
	// Offline asks for the offline brain even when a model is configured.
	Offline bool
}

// Config configures a Runner.
type Config struct {
	// NewCore builds the agent for one task. Required.
	NewCore func(ctx context.Context, env CoreEnv) (*Core, error)
	// WorkDir receives one temporary folder per task (data dir, copied
	// attachments), removed afterwards. Optional: empty means os.TempDir().
	WorkDir string
	// Keep leaves the task folders in place for inspection.
	Keep bool
	// TurnTimeout bounds one turn; 0 means 5 minutes.
	TurnTimeout time.Duration
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// Runner runs tasks through the router and the local adapter, one task at
// a time (model usage is read from process-wide counters, so tasks must
// not overlap). Safe for use by one goroutine at a time.
type Runner struct {
	cfg Config
	log *slog.Logger
}

// New validates cfg and returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.NewCore == nil {
		return nil, fmt.Errorf("%w: NewCore is required", ErrConfig)
	}
	if cfg.TurnTimeout < 0 {
		return nil, fmt.Errorf("%w: TurnTimeout must not be negative", ErrConfig)
	}
	if cfg.TurnTimeout == 0 {
		cfg.TurnTimeout = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Runner{cfg: cfg, log: cfg.Logger.With("component", "eval")}, nil
}

// Result is the outcome of one task.
type Result struct {
	Task  string `json:"task"`
	Kind  string `json:"kind"`
	Brain string `json:"brain"`
	Pass  bool   `json:"pass"`
	// Reason is "ok" or the failures, "; "-joined.
	Reason   string   `json:"reason"`
	Failures []string `json:"failures,omitempty"`
	// Error is set when the task could not run (infrastructure).
	Error            string       `json:"error,omitempty"`
	Steps            int          `json:"steps"`
	ModelCalls       int          `json:"model_calls"`
	PromptTokens     int          `json:"prompt_tokens"`
	CompletionTokens int          `json:"completion_tokens"`
	Tokens           int          `json:"tokens"` // as the replies report them
	WallMS           int64        `json:"wall_ms"`
	Turns            []TurnResult `json:"turns"`
}

// TurnResult is one turn of a task.
type TurnResult struct {
	Text     string      `json:"text"`
	Thread   string      `json:"thread"`
	Reply    string      `json:"reply"`
	Steps    int         `json:"steps"`
	Evidence int         `json:"evidence"`
	Calls    []SkillCall `json:"calls,omitempty"`
	Failures []string    `json:"failures,omitempty"`
	WallMS   int64       `json:"wall_ms"`
}

// Run runs every task in order and returns the report. It returns an
// error only when ctx ends; a task that fails or cannot run is a Result.
func (r *Runner) Run(ctx context.Context, tasks []Task, offline bool) (Report, error) {
	rep := Report{}
	for i := range tasks {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		res := r.RunTask(ctx, &tasks[i], offline)
		if rep.Brain == "" || rep.Brain == "unknown" {
			rep.Brain = res.Brain
		}
		r.log.Info("eval task done", "task", res.Task, "pass", res.Pass, "steps", res.Steps, "wall_ms", res.WallMS)
		rep.Results = append(rep.Results, res)
	}
	rep.Totals = totals(rep.Results)
	return rep, ctx.Err()
}

// RunTask runs one task in a fresh data dir and checks its answers.
func (r *Runner) RunTask(ctx context.Context, t *Task, offline bool) Result {
	res := Result{Task: t.Name, Kind: t.Kind, Brain: "unknown"}
	start := time.Now()
	before := readUsage()
	err := r.runTask(ctx, t, offline, &res)
	after := readUsage()
	res.WallMS = time.Since(start).Milliseconds()
	res.ModelCalls = int(after.calls - before.calls)
	res.PromptTokens = int(after.prompt - before.prompt)
	res.CompletionTokens = int(after.completion - before.completion)
	for i, tu := range res.Turns {
		res.Steps += tu.Steps
		for _, f := range tu.Failures {
			if len(t.Turns) > 1 {
				f = fmt.Sprintf("turn %d: %s", i+1, f)
			}
			res.Failures = append(res.Failures, f)
		}
	}
	if err != nil {
		res.Error = err.Error()
		res.Failures = append(res.Failures, "could not run: "+err.Error())
	}
	res.Pass = len(res.Failures) == 0
	res.Reason = "ok"
	if !res.Pass {
		res.Reason = strings.Join(res.Failures, "; ")
	}
	return res
}

func (r *Runner) runTask(ctx context.Context, t *Task, offline bool, res *Result) (err error) {
	work, err := os.MkdirTemp(r.cfg.WorkDir, "sleuth-eval-"+t.Name+"-")
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	if !r.cfg.Keep {
		defer os.RemoveAll(work)
	} else {
		r.log.Info("eval task folder kept", "task", t.Name, "dir", work)
	}
	dataDir := filepath.Join(work, "data")
	filesDir := filepath.Join(work, "files")
	if err := os.MkdirAll(filesDir, 0o700); err != nil {
		return err
	}
	for _, name := range t.Files() {
		b, err := t.read(name)
		if err != nil {
			return fmt.Errorf("attachment %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(filesDir, name), b, 0o600); err != nil {
			return fmt.Errorf("attachment %s: %w", name, err)
		}
	}

	core, err := r.cfg.NewCore(ctx, CoreEnv{DataDir: dataDir, Offline: offline})
	if err != nil {
		return fmt.Errorf("build agent: %w", err)
	}
	if core.Brain != "" {
		res.Brain = core.Brain
	}
	defer func() {
		if core.Close != nil {
			if cerr := core.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close agent: %w", cerr)
			}
		}
	}()
	auditDir := core.AuditDir
	if auditDir == "" {
		auditDir = filepath.Join(dataDir, "audit")
	}

	router, err := bot.NewRouter(bot.RouterConfig{Runner: core.Runner, Sessions: core.Sessions, Workers: 1, Logger: r.log})
	if err != nil {
		return err
	}
	adapter, err := local.New(local.Config{SpoolDir: filepath.Join(work, "spool"), ReplyTimeout: r.cfg.TurnTimeout, Logger: r.log})
	if err != nil {
		return err
	}
	router.Attach(adapter)

	runCtx, stop := context.WithCancel(ctx)
	routerDone := make(chan struct{})
	adapterDone := make(chan struct{})
	go func() {
		defer close(routerDone)
		if err := router.Run(runCtx); err != nil && runCtx.Err() == nil {
			r.log.Warn("eval router stopped", "task", t.Name, "error", err)
		}
	}()
	go func() {
		defer close(adapterDone)
		_ = adapter.Run(runCtx, router)
	}()
	defer func() {
		stop()
		<-adapterDone
		<-routerDone
	}()

	threads := map[string]string{}       // label -> platform thread id
	threadFiles := map[string][]string{} // label -> attachments so far
	seenCalls := 0
	for _, tu := range t.Turns {
		var atts []bot.Attachment
		for _, name := range tu.Attach {
			atts = append(atts, bot.Attachment{Name: name, Path: filepath.Join(filesDir, name)})
			if !contains(threadFiles[tu.Thread], name) {
				threadFiles[tu.Thread] = append(threadFiles[tu.Thread], name)
			}
		}
		turnStart := time.Now()
		resp, err := ask(ctx, adapter, local.Request{Thread: threads[tu.Thread], User: tu.User, Channel: tu.Channel, Text: tu.Text}, atts)
		if err != nil {
			return fmt.Errorf("turn %q: %w", truncate(tu.Text, 40), err)
		}
		threads[tu.Thread] = resp.Thread
		calls, err := readCalls(auditDir)
		if err != nil {
			return err
		}
		turnCalls := calls[min(seenCalls, len(calls)):]
		seenCalls = len(calls)
		ans := Answer{Text: resp.Reply, Evidence: resp.Evidence, Steps: resp.Steps, Failed: resp.Failed,
			Calls: turnCalls, Files: threadFiles[tu.Thread]}
		res.Tokens += resp.Tokens
		res.Turns = append(res.Turns, TurnResult{
			Text: tu.Text, Thread: tu.Thread, Reply: resp.Reply, Steps: resp.Steps,
			Evidence: len(resp.Evidence), Calls: turnCalls, WallMS: time.Since(turnStart).Milliseconds(),
			Failures: check(t, tu, ans, core.SideEffect),
		})
	}
	return nil
}

// ask sends a turn, retrying briefly while the adapter is starting.
func ask(ctx context.Context, a *local.Adapter, req local.Request, atts []bot.Attachment) (local.Response, error) {
	for i := 0; ; i++ {
		resp, err := a.Ask(ctx, req, atts)
		if err == nil || i >= 100 || !strings.Contains(err.Error(), "starting") {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return resp, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readCalls returns the skill calls recorded in the audit JSONL files of
// dir, oldest first.
func readCalls(dir string) ([]SkillCall, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []SkillCall
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, fmt.Errorf("read audit: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var rec struct {
				Action string `json:"action"`
				Skill  string `json:"skill"`
				Status string `json:"status"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Action != "call" {
				continue
			}
			out = append(out, SkillCall{Skill: rec.Skill, Status: rec.Status})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read audit: %w", err)
		}
	}
	return out, nil
}

// usage is the process-wide model usage from sleuth's metrics.
type usage struct{ calls, prompt, completion float64 }

func readUsage() usage {
	var u usage
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		return u
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "sleuth_model_tokens_total":
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() != "kind" {
						continue
					}
					switch l.GetValue() {
					case "prompt":
						u.prompt += m.GetCounter().GetValue()
					case "completion":
						u.completion += m.GetCounter().GetValue()
					}
				}
			}
		case "sleuth_model_latency_seconds":
			for _, m := range mf.GetMetric() {
				u.calls += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return u
}
