// Package jobs runs sleuth's scheduled work: daily digests posted to
// channels, scheduled log reports on operator-allowed paths, and the
// nightly low-priority memory cleanup.
//
// Guarantees:
//   - Fired once: every occurrence (job, scheduled time) is claimed in the
//     shared SQLite database before it runs, so a restart or a second
//     scheduler on the same database file never runs it twice. One job
//     never runs twice at once (a run that finds the previous one still
//     going is recorded as skipped).
//   - Delivered honestly: a run is "delivered" only when the platform
//     returned a message id. Failures are retried with bounded backoff,
//     recorded (status, attempts, error, message id), counted in
//     metrics.JobRuns, and after FailureThreshold consecutive failures
//     reported to the owner channel.
//   - Caught up once: an occurrence missed while sleuth was down runs once
//     at start-up when it is within the grace window.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// Defaults.
const (
	DefaultGrace            = 2 * time.Hour
	DefaultRunTimeout       = 10 * time.Minute
	DefaultMaxAttempts      = 3
	DefaultRetryBackoff     = 5 * time.Second
	maxRetryBackoff         = 2 * time.Minute
	DefaultFailureThreshold = 3
	DefaultBusyPoll         = 5 * time.Second
	DefaultBusyMaxWait      = 30 * time.Minute
	// maxPostText caps a job's posted text; longer output goes into the
	// reply's report (adapters upload it as a file).
	maxPostText = 3500
)

// Poster posts to a platform (bot.Adapter implements it). A poster that
// also has Tenant() string gives the tenant of the sessions seeded for
// its posts.
type Poster interface {
	Post(ctx context.Context, to bot.Conversation, r bot.Reply) (messageID string, err error)
}

// SkillSource finds skills by name (*skills.Registry implements it).
type SkillSource interface {
	Get(name string) (skills.Skill, bool)
}

// SessionSeeder makes a posted message a thread root with the post as its
// first assistant turn (memory.Sessions implements it).
type SessionSeeder interface {
	Ensure(ctx context.Context, s memory.Session) (memory.Session, error)
	AppendTurn(ctx context.Context, t memory.Turn) (memory.Turn, error)
}

// Cleaner prunes long-term memories (memory.LongTerm implements it).
type Cleaner interface {
	Cleanup(ctx context.Context, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) (int, error)
}

// AnalyzeFunc is the shape of logscan.Analyze.
type AnalyzeFunc func(ctx context.Context, paths []string, opt logscan.Options) (*logscan.Report, error)

// Clock is the scheduler's time source.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives once the clock reaches t.
	At(t time.Time) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// Config configures a Scheduler. Only DB is required; a job whose needs
// are not configured (no poster for its platform, unknown skill, a log
// path outside ReportPaths) is rejected at New and reported by Problems,
// and the other jobs still run.
type Config struct {
	// DB is the shared embedded database (memory.DB.SQL()); the jobs
	// tables live in it. Required.
	DB *sql.DB
	// Defs are the job definitions (Load). Optional; nil means none.
	Defs []Def
	// Posters by platform name (bot.PlatformSlack, …). Optional per
	// platform: jobs targeting a missing one are rejected.
	Posters map[string]Poster
	// Skills resolves a job's skill. Optional; nil rejects skill jobs.
	Skills SkillSource
	// Sessions seeds a thread session for every post, so follow-ups in the
	// thread have context. Optional; nil seeds nothing.
	Sessions SessionSeeder
	// LongTerm is cleaned by memory-cleanup. Optional; nil skips that part.
	LongTerm Cleaner
	// DataDir holds sessions/<id>/ workspaces that memory-cleanup expires.
	// Optional; "" skips attachment retention.
	DataDir string
	// ReportPaths are the globs log-report jobs may read
	// (SLEUTH_REPORT_PATHS). Optional; empty rejects every log-report job.
	ReportPaths []string
	// Analyze runs the log engine. Optional; nil means logscan.Analyze.
	Analyze AnalyzeFunc
	// TempDir holds the new bytes a log report analyses. Optional; ""
	// means os.TempDir().
	TempDir string
	// ReportMaxBytes caps the new bytes one file contributes to one report
	// (the newest are kept). Optional; zero means 64 MiB.
	ReportMaxBytes int64
	// OwnerTarget receives failure notices ("slack:C999";
	// SLEUTH_OWNER_CHANNEL). Optional; "" logs them only.
	OwnerTarget string
	// FailureThreshold is how many consecutive failed runs of a job send
	// a notice (and every that many after). Optional; zero means 3.
	FailureThreshold int
	// MaxAttempts bounds the attempts of one run. Optional; zero means 3.
	MaxAttempts int
	// RetryBackoff is the wait before the second attempt, doubling after
	// (capped at 2 min). Optional; zero means 5 s.
	RetryBackoff time.Duration
	// Grace is how late a missed occurrence may still run at start-up.
	// Optional; zero means 2 h, negative disables catch-up.
	Grace time.Duration
	// RunTimeout bounds one run, retries included. Optional; zero means
	// 10 min.
	RunTimeout time.Duration
	// Busy reports interactive work in progress (e.g. router queue depth >
	// 0); low-priority jobs (memory-cleanup) wait while it is true.
	// Optional; nil never waits.
	Busy func() bool
	// BusyPoll and BusyMaxWait pace that wait; after BusyMaxWait the job
	// proceeds. Optional; zero means 5 s and 30 min.
	BusyPoll, BusyMaxWait time.Duration
	// Clock is the time source. Optional; nil means the real clock.
	Clock Clock
	// Sleep waits between retries and busy polls. Optional; nil waits on
	// a timer (returning ctx.Err() when cancelled).
	Sleep func(ctx context.Context, d time.Duration) error
	// Instance names this scheduler in run records. Optional; "" means
	// hostname-pid.
	Instance string
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
}

// job is a definition ready to run.
type job struct {
	def    Def
	sched  schedule
	target Target // zero: no post
}

// Scheduler runs jobs on their schedules. Safe for concurrent use; Start
// once.
type Scheduler struct {
	cfg      Config
	log      *slog.Logger
	st       *store
	clock    Clock
	owner    Target
	jobs     map[string]*job
	names    []string
	problems []error

	mu      sync.Mutex
	started bool
	wg      sync.WaitGroup
}

// New validates cfg and the definitions and creates the jobs tables.
// Definitions that cannot run here
// are left out and reported by Problems (and logged); New fails only on a
// bad Config.
func New(cfg Config) (*Scheduler, error) {
	var errs []error
	if cfg.DB == nil {
		errs = append(errs, errors.New("DB is required"))
	}
	if cfg.FailureThreshold < 0 || cfg.MaxAttempts < 0 || cfg.RetryBackoff < 0 || cfg.RunTimeout < 0 || cfg.BusyPoll < 0 || cfg.BusyMaxWait < 0 || cfg.ReportMaxBytes < 0 {
		errs = append(errs, errors.New("limits must not be negative"))
	}
	var owner Target
	if cfg.OwnerTarget != "" {
		t, err := ParseTarget(cfg.OwnerTarget)
		if err != nil {
			errs = append(errs, fmt.Errorf("owner channel: %w", err))
		} else if cfg.Posters[t.Platform] == nil {
			errs = append(errs, fmt.Errorf("owner channel %s: no %s adapter is configured", cfg.OwnerTarget, t.Platform))
		}
		owner = t
	}
	for _, g := range cfg.ReportPaths {
		if !filepath.IsAbs(g) {
			errs = append(errs, fmt.Errorf("report path %q must be absolute", g))
		} else if _, err := filepath.Match(g, ""); err != nil {
			errs = append(errs, fmt.Errorf("report path %q: %w", g, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if cfg.FailureThreshold == 0 {
		cfg.FailureThreshold = DefaultFailureThreshold
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = DefaultRunTimeout
	}
	if cfg.BusyPoll == 0 {
		cfg.BusyPoll = DefaultBusyPoll
	}
	if cfg.BusyMaxWait == 0 {
		cfg.BusyMaxWait = DefaultBusyMaxWait
	}
	if cfg.ReportMaxBytes == 0 {
		cfg.ReportMaxBytes = defaultReportMaxBytes
	}
	if cfg.Analyze == nil {
		cfg.Analyze = logscan.Analyze
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = host + "-" + strconv.Itoa(os.Getpid())
	}
	clock := cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Scheduler{cfg: cfg, log: log, st: &store{db: cfg.DB}, clock: clock, owner: owner, jobs: map[string]*job{}}
	if err := s.st.migrate(context.Background()); err != nil {
		return nil, err
	}
	for _, d := range cfg.Defs {
		j, err := s.prepare(d)
		if err != nil {
			s.problems = append(s.problems, err)
			log.Error("job rejected", "job", d.Name, "error", err)
			continue
		}
		if _, dup := s.jobs[d.Name]; dup {
			err := fmt.Errorf("%w: job %q: defined twice", ErrInvalidDef, d.Name)
			s.problems = append(s.problems, err)
			log.Error("job rejected", "job", d.Name, "error", err)
			continue
		}
		s.jobs[d.Name] = j
		s.names = append(s.names, d.Name)
	}
	sort.Strings(s.names)
	return s, nil
}

// prepare checks a definition against this scheduler's configuration.
func (s *Scheduler) prepare(d Def) (*job, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	sched, _ := parseSchedule(d.Schedule, d.Timezone)
	j := &job{def: d, sched: sched}
	reject := func(format string, args ...any) error {
		return fmt.Errorf("%w: job %q: %s", ErrInvalidDef, d.Name, fmt.Sprintf(format, args...))
	}
	if d.Target != "" {
		j.target, _ = ParseTarget(d.Target)
		if s.cfg.Posters[j.target.Platform] == nil {
			return nil, reject("target %s: no %s adapter is configured", d.Target, j.target.Platform)
		}
	}
	switch d.Skill {
	case KindMemoryCleanup:
	case KindLogReport:
		a, _ := parseReportArgs(d.Args)
		if len(s.cfg.ReportPaths) == 0 {
			return nil, reject("log reports are off: no path is allowed (set SLEUTH_REPORT_PATHS)")
		}
		for _, p := range a.Paths {
			if !s.allowedPattern(p) {
				return nil, reject("path %q is outside the allowed report paths (SLEUTH_REPORT_PATHS: %s)", p, strings.Join(s.cfg.ReportPaths, ","))
			}
		}
	default:
		if s.cfg.Skills == nil {
			return nil, reject("skill %q: no skills are available to jobs", d.Skill)
		}
		sk, ok := s.cfg.Skills.Get(d.Skill)
		if !ok {
			return nil, reject("unknown skill %q", d.Skill)
		}
		raw, _ := json.Marshal(d.Args)
		if d.Args == nil {
			raw = []byte("{}")
		}
		if _, err := skills.ValidateArgs(sk.Spec(), raw); err != nil {
			return nil, reject("args: %v", err)
		}
	}
	return j, nil
}

// Problems returns the definitions New rejected, each naming the job and
// the reason.
func (s *Scheduler) Problems() []error { return append([]error(nil), s.problems...) }

// Info describes a job for `sleuth jobs list`.
type Info struct {
	Def
	// Next is the next scheduled occurrence; zero when disabled.
	Next time.Time `json:"next,omitempty"`
	Last *Run      `json:"last,omitempty"`
}

// List returns the accepted jobs, by name, with their next occurrence and
// last run.
func (s *Scheduler) List(ctx context.Context) ([]Info, error) {
	now := s.clock.Now()
	out := make([]Info, 0, len(s.names))
	for _, n := range s.names {
		j := s.jobs[n]
		in := Info{Def: j.def}
		if j.def.IsEnabled() {
			in.Next = j.sched.Next(now)
		}
		h, err := s.st.history(ctx, n, 1)
		if err != nil {
			return nil, err
		}
		if len(h) == 1 {
			in.Last = &h[0]
		}
		out = append(out, in)
	}
	return out, nil
}

// History returns the runs of job ("" for all jobs), newest first, at most
// limit (<= 0: 20).
func (s *Scheduler) History(ctx context.Context, name string, limit int) ([]Run, error) {
	if name != "" {
		if _, ok := s.jobs[name]; !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownJob, name)
		}
	}
	return s.st.history(ctx, name, limit)
}

// Start creates the tables, runs due catch-ups and schedules every enabled
// job; it returns at once. The jobs stop when ctx is done; Wait waits for
// them.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("jobs: scheduler already started")
	}
	s.started = true
	s.mu.Unlock()
	now := s.clock.Now()
	for _, n := range s.names {
		j := s.jobs[n]
		if !j.def.IsEnabled() {
			continue
		}
		first, err := s.st.firstSeen(ctx, n, now)
		if err != nil {
			return err
		}
		var catchUp time.Time
		if s.cfg.Grace > 0 {
			from := now.Add(-s.cfg.Grace)
			if first.After(from) {
				from = first
			}
			if last := j.sched.last(from, now); !last.IsZero() {
				done, err := s.st.exists(ctx, n, last)
				if err != nil {
					return err
				}
				if !done {
					catchUp = last
				}
			}
		}
		next := j.sched.Next(now)
		s.wg.Add(1)
		go s.loop(ctx, j, catchUp, next)
	}
	s.log.Info("jobs scheduled", "jobs", len(s.names), "rejected", len(s.problems))
	return nil
}

// Wait blocks until every job loop started by Start has exited.
func (s *Scheduler) Wait() { s.wg.Wait() }

// loop runs one job on its schedule until ctx is done. A run that outlasts
// the next occurrences skips them (logged).
func (s *Scheduler) loop(ctx context.Context, j *job, catchUp, next time.Time) {
	defer s.wg.Done()
	if !catchUp.IsZero() {
		s.log.Info("running missed job", "job", j.def.Name, "scheduled", catchUp)
		s.fire(ctx, j, catchUp, false)
	}
	for !next.IsZero() {
		select {
		case <-ctx.Done():
			return
		case <-s.clock.At(next):
		}
		s.fire(ctx, j, next, false)
		n := j.sched.Next(next)
		if now := s.clock.Now(); !n.IsZero() && n.Before(now) {
			s.log.Warn("job run outlasted its next occurrences; skipping them", "job", j.def.Name)
			n = j.sched.Next(now)
		}
		next = n
	}
}

// RunNow runs a job at once, through the same path as the schedule
// (claim, retries, delivery, record, notices), and returns its record. A
// disabled job may be run by hand. The error is ErrUnknownJob, ErrOverlap,
// or the run's failure.
func (s *Scheduler) RunNow(ctx context.Context, name string) (Run, error) {
	j, ok := s.jobs[name]
	if !ok {
		return Run{}, fmt.Errorf("%w: %q", ErrUnknownJob, name)
	}
	at := s.clock.Now().UTC().Truncate(time.Millisecond)
	r, err := s.fire(ctx, j, at, true)
	for i := 1; errors.Is(err, ErrClaimed) && i < 100; i++ {
		// Two manual runs in one millisecond: each gets its own record.
		r, err = s.fire(ctx, j, at.Add(time.Duration(i)*time.Millisecond), true)
	}
	if err == nil && r.Status == StatusFailed {
		err = errors.New(r.Error)
	}
	return r, err
}

// fire claims an occurrence and runs it; it never panics.
func (s *Scheduler) fire(ctx context.Context, j *job, at time.Time, manual bool) (Run, error) {
	r := Run{Job: j.def.Name, Scheduled: at.UTC(), Manual: manual, Instance: s.cfg.Instance, Target: j.def.Target, Started: s.clock.Now().UTC()}
	log := s.log.With("job", r.Job, "scheduled", r.Scheduled)
	switch err := s.st.claim(ctx, r, r.Started.Add(-s.cfg.RunTimeout-time.Minute)); {
	case errors.Is(err, ErrClaimed):
		log.Debug("occurrence already claimed")
		return r, err
	case errors.Is(err, ErrOverlap):
		log.Warn("previous run still running; skipped this occurrence")
		metrics.JobRuns.WithLabelValues(r.Job, "overlap").Inc()
		r.Status, r.Error = StatusSkipped, err.Error()
		return r, err
	case err != nil:
		log.Error("claim run", "error", err)
		metrics.JobRuns.WithLabelValues(r.Job, StatusFailed).Inc()
		return r, err
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
	s.execute(rctx, j, &r, log)
	cancel()
	r.Finished = s.clock.Now().UTC()
	// Record even when ctx is cancelled (shutdown).
	if err := s.st.finish(context.WithoutCancel(ctx), r); err != nil {
		log.Error("record run", "error", err)
	}
	metrics.JobRuns.WithLabelValues(r.Job, r.Status).Inc()
	if r.Status == StatusFailed {
		log.Error("job failed", "attempts", r.Attempts, "error", r.Error)
		s.noticeFailures(context.WithoutCancel(ctx), j, r)
	} else {
		log.Info("job finished", "status", r.Status, "attempts", r.Attempts, "message_id", r.MessageID)
	}
	return r, nil
}

// permanent marks a failure that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// execute produces the job's output and delivers it, retrying with
// backoff. It sets r's status, attempts, error and message id.
func (s *Scheduler) execute(ctx context.Context, j *job, r *Run, log *slog.Logger) {
	var out *output
	backoff := s.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		r.Attempts = attempt
		err := s.attempt(ctx, j, &out, r)
		if err == nil {
			r.Error = ""
			return
		}
		r.Status, r.Error = StatusFailed, err.Error()
		var p permanent
		if errors.As(err, &p) || attempt >= s.cfg.MaxAttempts || ctx.Err() != nil {
			return
		}
		log.Warn("job attempt failed; retrying", "attempt", attempt, "backoff", backoff, "error", err)
		metrics.JobRuns.WithLabelValues(r.Job, "retry").Inc()
		if err := s.cfg.Sleep(ctx, backoff); err != nil {
			r.Error += "; " + err.Error()
			return
		}
		backoff = min(backoff*2, maxRetryBackoff)
	}
}

// output is what a job produced, before delivery.
type output struct {
	reply        bot.Reply
	empty        bool
	summary      string
	fingerprints []string
	// commit runs after delivery (log-report offsets).
	commit func(ctx context.Context) error
}

// attempt runs one attempt: produce (once), then post.
func (s *Scheduler) attempt(ctx context.Context, j *job, out **output, r *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("job panicked", "job", j.def.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = permanent{fmt.Errorf("panic: %v", p)}
		}
	}()
	if *out == nil {
		o, err := s.produce(ctx, j)
		if err != nil {
			return err
		}
		*out = o
		r.Summary = o.summary
	}
	o := *out
	switch {
	case j.target.Platform == "":
		r.Status = StatusDone
		return o.commitNow(ctx)
	case o.empty && j.def.SkipEmpty:
		r.Status = StatusSkipped
		return o.commitNow(ctx)
	}
	if r.MessageID == "" {
		id, err := s.post(ctx, j.target, o.reply)
		if err != nil {
			return fmt.Errorf("post to %s: %w", j.target, err)
		}
		r.MessageID = id
		s.seed(ctx, j, id, o)
	}
	r.Status = StatusDelivered
	return o.commitNow(ctx)
}

func (o *output) commitNow(ctx context.Context) error {
	if o.commit == nil {
		return nil
	}
	if err := o.commit(ctx); err != nil {
		return permanent{fmt.Errorf("after delivery: %w", err)}
	}
	o.commit = nil
	return nil
}

// post sends a reply and insists on a message id.
func (s *Scheduler) post(ctx context.Context, t Target, rep bot.Reply) (string, error) {
	p := s.cfg.Posters[t.Platform]
	if p == nil {
		return "", permanent{fmt.Errorf("no %s adapter", t.Platform)}
	}
	id, err := p.Post(ctx, bot.Conversation{Platform: t.Platform, Tenant: s.tenantOf(t.Platform), Channel: t.Channel}, rep)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(id) == "" {
		return "", ErrNotDelivered
	}
	return id, nil
}

// localTenant is the tenant the local adapter gives its messages
// (local.Tenant).
const localTenant = "local"

// tenantOf returns the tenant of a platform's poster: its Tenant() when it
// has one, "local" for the local adapter, else "".
func (s *Scheduler) tenantOf(platform string) string {
	if t, ok := s.cfg.Posters[platform].(interface{ Tenant() string }); ok {
		return t.Tenant()
	}
	if platform == bot.PlatformLocal {
		return localTenant
	}
	return ""
}

// seed makes the posted message a thread root whose session holds the
// post, so a follow-up in its thread has context. Failures are logged.
func (s *Scheduler) seed(ctx context.Context, j *job, id string, o *output) {
	if s.cfg.Sessions == nil {
		return
	}
	tenant := s.tenantOf(j.target.Platform)
	m := bot.Message{Platform: j.target.Platform, Tenant: tenant, Channel: j.target.Channel, ID: id, Thread: id}
	key := m.SessionKey()
	if _, err := s.cfg.Sessions.Ensure(ctx, memory.Session{Key: key, Platform: m.Platform, Tenant: tenant, Channel: m.Channel, Thread: id}); err != nil {
		s.log.Warn("seed digest thread", "job", j.def.Name, "error", err)
		return
	}
	content := o.reply.Text
	if o.reply.Report != "" {
		content += "\n\n" + o.reply.Report
	}
	if _, err := s.cfg.Sessions.AppendTurn(ctx, memory.Turn{Session: key, Role: "assistant", Content: content, MessageID: id, Fingerprints: o.fingerprints}); err != nil {
		s.log.Warn("seed digest thread", "job", j.def.Name, "error", err)
	}
}

// produce runs the job's kind or skill.
func (s *Scheduler) produce(ctx context.Context, j *job) (*output, error) {
	switch j.def.Skill {
	case KindMemoryCleanup:
		return s.cleanup(ctx, j)
	case KindLogReport:
		return s.logReport(ctx, j)
	}
	sk, ok := s.cfg.Skills.Get(j.def.Skill)
	if !ok {
		return nil, permanent{fmt.Errorf("unknown skill %q", j.def.Skill)}
	}
	raw := []byte("{}")
	if j.def.Args != nil {
		raw, _ = json.Marshal(j.def.Args)
	}
	args, err := skills.ValidateArgs(sk.Spec(), raw)
	if err != nil {
		return nil, permanent{err}
	}
	env := skills.Env{Platform: j.target.Platform, Tenant: s.tenantOf(j.target.Platform), Channel: j.target.Channel}
	res, err := sk.Run(ctx, skills.Call{Skill: j.def.Skill, Args: args, Env: env})
	metrics.SkillCalls.WithLabelValues(j.def.Skill, statusOr(res.Status, err)).Inc()
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", j.def.Skill, err)
	}
	if res.Status != skills.StatusOK {
		return nil, permanent{fmt.Errorf("skill %s: %s", j.def.Skill, res.Output)}
	}
	quiet, _ := res.Metadata["quiet"].(bool)
	empty, _ := res.Metadata["empty"].(bool)
	o := &output{reply: textReply(res.Output, j.def.Name), empty: quiet || empty, fingerprints: res.Fingerprints, summary: firstLine(res.Output)}
	return o, nil
}

func statusOr(status string, err error) string {
	if err != nil {
		return "infra_error"
	}
	return status
}

// textReply fits text in one message; the full text goes into the report.
func textReply(text, name string) bot.Reply {
	if len(text) <= maxPostText {
		return bot.Reply{Text: text}
	}
	cut := strings.LastIndexByte(text[:maxPostText], '\n')
	if cut < maxPostText/2 {
		cut = maxPostText
	}
	return bot.Reply{Text: text[:cut] + "\n… (full text attached)", Report: text, ReportName: name + ".md"}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.NewReplacer("**", "", "`", "").Replace(s)
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// noticeFailures tells the owner channel when a job has failed
// FailureThreshold times in a row (and every FailureThreshold after).
func (s *Scheduler) noticeFailures(ctx context.Context, j *job, r Run) {
	n, err := s.st.consecutiveFailures(ctx, j.def.Name)
	if err != nil {
		s.log.Error("count job failures", "job", j.def.Name, "error", err)
		return
	}
	if n < s.cfg.FailureThreshold || n%s.cfg.FailureThreshold != 0 {
		return
	}
	text := fmt.Sprintf("**Job %s failed %d times in a row.** Last error (attempt %d): %s\nTarget: %s. See `sleuth jobs history %s`.",
		j.def.Name, n, r.Attempts, r.Error, orNone(r.Target), j.def.Name)
	if s.owner.Platform == "" {
		s.log.Error("job keeps failing and no owner channel is set (SLEUTH_OWNER_CHANNEL)", "job", j.def.Name, "failures", n)
		return
	}
	id, err := s.post(ctx, s.owner, bot.Reply{Text: text, Failed: true})
	if err != nil {
		s.log.Error("notify owner channel", "job", j.def.Name, "failures", n, "error", err)
		metrics.JobRuns.WithLabelValues(j.def.Name, "notice_failed").Inc()
		return
	}
	metrics.JobRuns.WithLabelValues(j.def.Name, "notice").Inc()
	s.log.Warn("owner notified of failing job", "job", j.def.Name, "failures", n, "message_id", id)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
