package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// SessionIndex is what the router needs from the session store.
// memory.Sessions satisfies it.
type SessionIndex interface {
	// Exists reports whether a session with this key was ever started.
	Exists(ctx context.Context, key string) (bool, error)
	// Claim returns true the first time a key is claimed, persistently.
	Claim(ctx context.Context, key string) (bool, error)
}

// RouterConfig configures a Router.
type RouterConfig struct {
	// Runner answers turns. Required.
	Runner Runner
	// Sessions dedupes events and tells which threads have sessions. Required.
	Sessions SessionIndex
	// Workers bounds the number of runs in flight across sessions; default 4.
	Workers int
	// QueuePerSession bounds the messages waiting in one thread; default 8.
	QueuePerSession int
	// MaxSessions bounds the threads with waiting work; default 1024.
	MaxSessions int
	// ShutdownGrace is how long running turns may finish after the router's
	// context is cancelled before they are cut off; default 25 s.
	ShutdownGrace time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Router dedupes incoming messages, decides whether they are for the bot,
// and runs them through the Runner: one run at a time per session, at most
// Workers runs at once, follow-ups queued in order. It implements Inbox.
// Safe for concurrent use.
type Router struct {
	cfg      RouterConfig
	log      *slog.Logger
	adapters map[string]Adapter

	runSeq atomic.Uint64

	mu       sync.Mutex
	closed   bool
	sessions map[string]*sessionQueue
	ready    chan string
}

type sessionQueue struct {
	pending []Message
	running bool
	cancel  context.CancelFunc // cancels the running turn ("stop")
}

// NewRouter validates cfg and returns a router; call Attach for each
// adapter, then Run.
func NewRouter(cfg RouterConfig) (*Router, error) {
	var errs []error
	if cfg.Runner == nil {
		errs = append(errs, errors.New("router: Runner is required"))
	}
	if cfg.Sessions == nil {
		errs = append(errs, errors.New("router: Sessions is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.QueuePerSession <= 0 {
		cfg.QueuePerSession = 8
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 1024
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 25 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Router{
		cfg:      cfg,
		log:      cfg.Logger,
		adapters: map[string]Adapter{},
		sessions: map[string]*sessionQueue{},
		ready:    make(chan string, cfg.MaxSessions),
	}, nil
}

// Attach registers the adapter that serves its platform's messages. Call it
// before Run.
func (r *Router) Attach(a Adapter) { r.adapters[a.Platform()] = a }

// Adapter returns the adapter of a platform.
func (r *Router) Adapter(platform string) (Adapter, bool) {
	a, ok := r.adapters[platform]
	return a, ok
}

// stopWords cancel the running turn of a thread.
var stopWords = map[string]bool{"stop": true, "cancel": true, "abort": true}

// Deliver implements Inbox. It never blocks on a run.
func (r *Router) Deliver(ctx context.Context, m Message) (err error) {
	outcome := "queued"
	defer func() {
		switch {
		case errors.Is(err, ErrDuplicate):
			outcome = "duplicate"
		case errors.Is(err, ErrNotForBot):
			outcome = "ignored"
		case err != nil:
			outcome = "rejected"
		}
		metrics.EventsReceived.WithLabelValues(m.Platform, outcome).Inc()
	}()
	if _, ok := r.adapters[m.Platform]; !ok {
		return fmt.Errorf("no adapter for platform %q", m.Platform)
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return ErrClosed
	}
	key := m.SessionKey()

	// Is it for the bot? Decide before claiming ids, so the plain "message"
	// twin of a mention does not burn the mention's id.
	if !m.Mentioned && !m.DM && !r.active(key) {
		ok, err := r.cfg.Sessions.Exists(ctx, key)
		if err != nil {
			return fmt.Errorf("look up session: %w", err)
		}
		if !ok {
			return ErrNotForBot
		}
	}
	prefix := m.Platform + "/" + m.Tenant + "/"
	if m.ID != "" {
		first, err := r.cfg.Sessions.Claim(ctx, prefix+"msg:"+m.Channel+"/"+m.ID)
		if err != nil {
			return fmt.Errorf("dedupe message: %w", err)
		}
		if !first {
			return ErrDuplicate
		}
	}
	if m.EventID != "" {
		first, err := r.cfg.Sessions.Claim(ctx, prefix+"event:"+m.EventID)
		if err != nil {
			return fmt.Errorf("dedupe event: %w", err)
		}
		if !first {
			return ErrDuplicate
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	q := r.sessions[key]
	if q == nil {
		q = &sessionQueue{}
		r.sessions[key] = q
		defer func() {
			if err != nil && len(q.pending) == 0 && !q.running {
				delete(r.sessions, key)
			}
		}()
	}
	if q.running && stopWords[strings.ToLower(strings.TrimSpace(strings.Trim(m.Text, ".!")))] && q.cancel != nil {
		q.cancel()
		return nil
	}
	if len(q.pending) >= r.cfg.QueuePerSession {
		return ErrQueueFull
	}
	if !q.running && len(q.pending) == 0 {
		select {
		case r.ready <- key:
		default:
			return ErrQueueFull
		}
	}
	q.pending = append(q.pending, m)
	metrics.QueueDepth.Inc()
	return nil
}

func (r *Router) active(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.sessions[key]
	return ok
}

// Run drains the queues with the worker pool until ctx is cancelled. Then
// it stops taking messages, lets running turns finish for ShutdownGrace,
// cuts off the rest, and tells every thread whose message was not answered
// that it was interrupted. It returns when all workers have exited.
func (r *Router) Run(ctx context.Context) error {
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.worker(ctx, runCtx)
		}()
	}
	<-ctx.Done()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.cfg.ShutdownGrace):
		r.log.Warn("shutdown grace expired; interrupting running turns")
		cancelRuns()
		<-done
	}
	r.interruptPending()
	return nil
}

// worker takes sessions with pending work until stop is cancelled.
func (r *Router) worker(stop, runCtx context.Context) {
	for {
		select {
		case <-stop.Done():
			return
		case key := <-r.ready:
			r.runNext(runCtx, key)
		}
	}
}

// runNext runs the first pending message of a session, then hands the
// session back to the pool if more are waiting.
func (r *Router) runNext(ctx context.Context, key string) {
	r.mu.Lock()
	q := r.sessions[key]
	if q == nil || len(q.pending) == 0 {
		r.mu.Unlock()
		return
	}
	m := q.pending[0]
	q.pending = q.pending[1:]
	q.running = true
	turnCtx, cancel := context.WithCancel(ctx)
	q.cancel = cancel
	r.mu.Unlock()

	r.runTurn(turnCtx, key, m)
	cancel()
	metrics.QueueDepth.Dec()

	r.mu.Lock()
	q.running = false
	q.cancel = nil
	if len(q.pending) > 0 && !r.closed {
		select {
		case r.ready <- key:
		default:
			// The ready queue is full of other sessions; keep going here
			// rather than drop this one.
			r.mu.Unlock()
			r.runNext(ctx, key)
			return
		}
	} else if len(q.pending) == 0 {
		delete(r.sessions, key)
	}
	r.mu.Unlock()
}

// runTurn runs one message and delivers its reply. Panics become an error
// reply; one bad event never takes the process down.
func (r *Router) runTurn(ctx context.Context, key string, m Message) {
	a := r.adapters[m.Platform]
	runID := fmt.Sprintf("%x", r.runSeq.Add(1)+uint64(time.Now().UnixNano()))
	log := r.log.With("run_id", runID, "session", key, "platform", m.Platform, "message_id", m.ID)
	progress := a.StartProgress(ctx, m)
	start := time.Now()
	panicked := false
	reply, err := func() (rep Reply, err error) {
		defer func() {
			if p := recover(); p != nil {
				panicked = true
				log.Error("run panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = fmt.Errorf("internal error: %v", p)
			}
		}()
		return r.cfg.Runner.Run(ctx, Turn{
			Message:    m,
			SessionKey: key,
			RunID:      runID,
			Open:       a.Open,
			Progress:   func(text string) { progress.Update(ctx, text) },
		})
	}()
	outcome := "ok"
	switch {
	case err != nil && ctx.Err() != nil:
		outcome = "interrupted"
		reply = Reply{Failed: true, Text: "This request was interrupted before I finished (stopped, or sleuth is restarting). Ask again and I will pick it up from the thread."}
	case err != nil:
		outcome = "failed"
		reply = Reply{Failed: true, Text: "Sorry, I could not finish this one: " + err.Error()}
	case reply.Failed:
		outcome = "failed"
	}
	if err != nil {
		log.Error("run failed", "error", err, "duration_ms", time.Since(start).Milliseconds())
	} else {
		log.Info("run finished", "outcome", outcome, "steps", reply.Steps, "tokens", reply.Tokens, "duration_ms", time.Since(start).Milliseconds())
	}
	if panicked {
		// The runner counts the runs it finishes; a panic never got there.
		metrics.Runs.WithLabelValues("failed").Inc()
	}
	// Deliver even when the turn's context was cancelled.
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if _, err := progress.Finish(finishCtx, reply); err != nil {
		log.Error("deliver reply", "error", err)
	}
}

// interruptPending tells each thread with a queued, never-started message
// that it was not answered.
func (r *Router) interruptPending() {
	r.mu.Lock()
	var left []Message
	for key, q := range r.sessions {
		left = append(left, q.pending...)
		delete(r.sessions, key)
	}
	r.mu.Unlock()
	for _, m := range left {
		metrics.QueueDepth.Dec()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		reply := Reply{Failed: true, Text: "sleuth is restarting and did not get to this message. Please ask again in a minute."}
		if _, err := r.adapters[m.Platform].Post(ctx, ConversationOf(m), reply); err != nil {
			r.log.Error("tell thread it was interrupted", "platform", m.Platform, "message_id", m.ID, "error", err)
		}
		cancel()
	}
}

// OpenLimited wraps an attachment reader so that reading more than max
// bytes fails with ErrTooLarge. Adapters use it to cap downloads.
func OpenLimited(rc io.ReadCloser, max int64) io.ReadCloser {
	return &limitedReader{rc: rc, left: max}
}

type limitedReader struct {
	rc   io.ReadCloser
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

func (l *limitedReader) Close() error { return l.rc.Close() }

// Busy reports whether any turn is queued or running; low-priority jobs
// wait while it is true.
func (r *Router) Busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions) > 0
}
