// Package agent answers a turn: it loads the session, stores new
// attachments, recalls long-term memories, runs a guarded decide–act–observe
// loop over the registered skills with a Brain (a model through langchaingo,
// or the offline rule brain), checks the evidence cited in the answer, and
// writes the turn, an audit trail and distilled memories.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/agent/redact"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// Defaults of Config.
const (
	DefaultMaxSteps           = 8
	DefaultMaxCallsPerSkill   = 3
	DefaultOutputCap          = 2000
	DefaultMaxAttachmentBytes = 256 << 20
	DefaultHistoryTurns       = 8
	DefaultMaxOfferedSkills   = 12
	// staleStepsLimit is how many steps in a row may bring no new result
	// before the loop stops searching.
	staleStepsLimit = 3
)

// DefaultCoreSkills are always offered to the model when registered.
var DefaultCoreSkills = []string{
	"analyze-log", "read-log", "query-issue-kb", "compare-logs", "generate-report",
	"write-snapshot", "search-memory", "remember", "forget",
}

// Errors.
var (
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("agent: invalid config")
)

// Config configures an Agent.
type Config struct {
	// Registry holds the skills the agent may call. Required.
	Registry *skills.Registry
	// Sessions is the session store. Required.
	Sessions memory.Sessions
	// Memory is the long-term store. Optional: nil means no long-term memory.
	Memory memory.LongTerm
	// Brain decides the actions. Optional: nil means the offline brain.
	// When a non-offline brain fails, the turn falls back to the offline brain.
	Brain Brain
	// MaxSteps caps decisions per turn; 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxCallsPerSkill caps calls of one skill per turn; 0 means 3.
	MaxCallsPerSkill int
	// OutputCap caps the characters of one skill output in a prompt; 0 means
	// 2000. The full output is kept in the session workspace.
	OutputCap int
	// MaxAttachmentBytes caps one stored attachment; 0 means 256 MiB.
	MaxAttachmentBytes int64
	// AllowSideEffects lists the skills with side effects that may run (and
	// then only when the person's own message asks for them). Empty: none.
	AllowSideEffects []string
	// PersonaFile replaces the embedded persona (SLEUTH_PERSONA_FILE). Optional.
	PersonaFile string
	// AuditDir receives one JSONL record per step. Optional: empty disables audit.
	AuditDir string
	// Clock returns the time; nil means time.Now.
	Clock func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// ValidateArgs checks and coerces arguments against a skill's schema.
	// Optional: nil means skills.ValidateArgs.
	ValidateArgs func(spec skills.Spec, raw json.RawMessage) (json.RawMessage, error)
	// CoreSkills are always offered; nil means DefaultCoreSkills.
	CoreSkills []string
	// MaxOfferedSkills bounds the skills offered per decision; 0 means 12.
	// Above it the model sees the core skills plus the most relevant others.
	MaxOfferedSkills int
	// HistoryTurns is how many recent turns go into the prompt verbatim;
	// older ones are summarised. 0 means 8.
	HistoryTurns int
}

// Agent answers turns. It is safe for concurrent use by different sessions;
// the router runs one turn at a time per session.
type Agent struct {
	cfg     Config
	log     *slog.Logger
	persona Persona
	offline *OfflineBrain
	audit   *auditLog
	allow   map[string]bool
	core    map[string]bool
}

// New validates cfg and returns an Agent.
func New(cfg Config) (*Agent, error) {
	var errs []error
	if cfg.Registry == nil {
		errs = append(errs, errors.New("Registry is required"))
	}
	if cfg.Sessions == nil {
		errs = append(errs, errors.New("Sessions is required"))
	}
	if cfg.MaxSteps < 0 || cfg.MaxCallsPerSkill < 0 || cfg.OutputCap < 0 || cfg.MaxAttachmentBytes < 0 {
		errs = append(errs, errors.New("limits must not be negative"))
	}
	persona, err := LoadPersona(cfg.PersonaFile)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxCallsPerSkill == 0 {
		cfg.MaxCallsPerSkill = DefaultMaxCallsPerSkill
	}
	if cfg.OutputCap == 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.MaxAttachmentBytes == 0 {
		cfg.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	if cfg.HistoryTurns == 0 {
		cfg.HistoryTurns = DefaultHistoryTurns
	}
	if cfg.MaxOfferedSkills == 0 {
		cfg.MaxOfferedSkills = DefaultMaxOfferedSkills
	}
	if cfg.CoreSkills == nil {
		cfg.CoreSkills = DefaultCoreSkills
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ValidateArgs == nil {
		cfg.ValidateArgs = skills.ValidateArgs
	}
	a := &Agent{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "agent"),
		persona: persona,
		offline: NewOfflineBrain(),
		allow:   make(map[string]bool),
		core:    make(map[string]bool),
	}
	for _, n := range cfg.AllowSideEffects {
		a.allow[n] = true
	}
	for _, n := range cfg.CoreSkills {
		a.core[n] = true
	}
	if cfg.AuditDir != "" {
		a.audit, err = openAudit(cfg.AuditDir)
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Close releases the audit log.
func (a *Agent) Close() error {
	if a.audit != nil {
		return a.audit.Close()
	}
	return nil
}

var _ bot.Runner = (*Agent)(nil)

// Run answers one turn. It implements bot.Runner. A returned error means
// the turn could not be processed at all (session store down, context
// cancelled); problems the person can fix (a binary file, a file too large)
// are a Reply with Failed set.
func (a *Agent) Run(ctx context.Context, t bot.Turn) (bot.Reply, error) {
	start := a.cfg.Clock()
	if t.Progress == nil {
		t.Progress = func(string) {}
	}
	m := t.Message
	key := t.SessionKey
	if key == "" {
		key = m.SessionKey()
	}
	attrs := []any{"session", key}
	if t.RunID != "" {
		attrs = append(attrs, "run_id", t.RunID)
	}
	log := a.log.With(attrs...)
	ctx = withRunAttrs(ctx, attrs)
	thread := m.Thread
	if thread == "" {
		thread = m.ID
	}
	sess, err := a.cfg.Sessions.Ensure(ctx, memory.Session{
		Key: key, Platform: m.Platform, Tenant: m.Tenant, Channel: m.Channel,
		Thread: thread, User: m.User, Link: m.Link, Status: "waiting",
		CreatedAt: start, UpdatedAt: start,
	})
	if err != nil {
		metrics.Runs.WithLabelValues("failed").Inc()
		return bot.Reply{}, fmt.Errorf("load session: %w", err)
	}
	if err := a.cfg.Sessions.SetStatus(ctx, key, "waiting"); err != nil {
		log.Warn("set session status", "error", err)
	}

	r := &run{a: a, log: log, turn: t, sess: sess, key: key, start: start}
	reply, err := r.do(ctx)
	status := "open"
	outcome := "ok"
	switch {
	case err != nil && ctx.Err() != nil:
		status, outcome = "interrupted", "interrupted"
	case err != nil || reply.Failed:
		status, outcome = "failed", "failed"
	case r.fallback != "":
		outcome = "fallback"
	}
	// The status write must survive a cancelled turn.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := a.cfg.Sessions.SetStatus(sctx, key, status); serr != nil {
		log.Warn("set session status", "error", serr)
	}
	metrics.Runs.WithLabelValues(outcome).Inc()
	log.Info("turn done", "steps", reply.Steps, "tokens", reply.Tokens,
		"brain", r.brainName(), "outcome", outcome, "duration_ms", a.cfg.Clock().Sub(start).Milliseconds())
	return reply, err
}

// scopeOf is the long-term memory scope of a message: tenant + user +
// channel, with no channel in a DM.
func scopeOf(m bot.Message) memory.Scope {
	s := memory.Scope{Tenant: m.Tenant, User: m.User, Channel: m.Channel}
	if m.DM {
		s.Channel = ""
	}
	return s
}

// redactText redacts s and adds the count to *n.
func redactText(s string, n *int) string {
	out, c := redact.String(s)
	*n += c
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " \n") + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

type runAttrsKey struct{}

// withRunAttrs carries the attributes of a run (session, run id) in ctx,
// so the parts the agent calls (the model brain) put them on their own
// log lines.
func withRunAttrs(ctx context.Context, attrs []any) context.Context {
	return context.WithValue(ctx, runAttrsKey{}, attrs)
}

// runLog is l with the attributes of the run ctx belongs to, if any.
func runLog(ctx context.Context, l *slog.Logger) *slog.Logger {
	if attrs, ok := ctx.Value(runAttrsKey{}).([]any); ok {
		return l.With(attrs...)
	}
	return l
}
