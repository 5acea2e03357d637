package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// ResilientConfig configures NewResilient.
type ResilientConfig struct {
	// Primary is the store to protect (Qdrant). Required.
	Primary LongTerm
	// DB holds the outbox of writes not yet applied. Required.
	DB *DB
	// CallTimeout bounds each read of the primary, so a slow store does
	// not hold up a turn. Optional; zero means 3 s.
	CallTimeout time.Duration
	// MinBackoff and MaxBackoff bound the retry delay while the primary is
	// down. Optional; zero means 500 ms and 30 s.
	MinBackoff, MaxBackoff time.Duration
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional; nil means time.Now.
	Now func() time.Time
}

// Resilient wraps a long-term store that may be down or slow (Qdrant) so
// that sleuth keeps answering without long-term memory:
//
//   - Add never loses an acknowledged write: records are prepared (ID,
//     redaction) and written to an outbox table in the embedded database
//     first, then applied to the primary in order; if the primary is down
//     Add still returns nil and the outbox is replayed when it is back,
//     also after a restart.
//   - Search, List, Delete and Cleanup fail fast with ErrUnavailable while
//     the primary is known to be down (callers answer without memories),
//     and each call is bounded by CallTimeout. Delete and Cleanup first
//     apply pending writes, so they never miss a queued record.
//   - Failures are logged once per outage and counted in
//     metrics.MemoryErrors by operation; a background loop retries with
//     exponential backoff and replays the outbox.
//
// Safe for concurrent use. Close stops the loop and closes the primary.
type Resilient struct {
	primary LongTerm
	db      *DB
	cfg     ResilientConfig
	log     *slog.Logger

	healthy atomic.Bool
	flushMu sync.Mutex
	wake    chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
}

var _ LongTerm = (*Resilient)(nil)

// outboxAdd is the body of an "add" outbox entry.
type outboxAdd struct {
	Records []outboxRecord `json:"records"`
}

type outboxRecord struct {
	Record
	Vector []float32 `json:"vector,omitempty"`
}

// NewResilient wraps cfg.Primary and starts its retry loop. It does not
// wait for the primary: a store that is down at start is retried in the
// background.
func NewResilient(cfg ResilientConfig) (*Resilient, error) {
	var errs []error
	if cfg.Primary == nil {
		errs = append(errs, errors.New("memory: ResilientConfig.Primary is required"))
	}
	if cfg.DB == nil {
		errs = append(errs, errors.New("memory: ResilientConfig.DB is required"))
	}
	if cfg.CallTimeout < 0 || cfg.MinBackoff < 0 || cfg.MaxBackoff < 0 {
		errs = append(errs, errors.New("memory: Resilient timeouts must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 3 * time.Second
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Resilient{primary: cfg.Primary, db: cfg.DB, cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	r.healthy.Store(true)
	go r.loop(ctx)
	r.kick() // replay what a previous run left in the outbox
	return r, nil
}

// Healthy reports whether the primary answered the last call.
func (r *Resilient) Healthy() bool { return r.healthy.Load() }

// Pending returns the number of writes waiting in the outbox.
func (r *Resilient) Pending(ctx context.Context) (int, error) {
	var n int
	err := r.db.sql.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n)
	return n, err
}

func (r *Resilient) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// failed records a primary failure of op: metric always; a log line and
// the switch to "down" when the failure means the store is unreachable.
func (r *Resilient) failed(op string, err error) {
	metrics.MemoryErrors.WithLabelValues(op).Inc()
	if !unavailable(err) {
		r.log.Error("long-term memory error", "op", op, "error", err)
		return
	}
	if r.healthy.Swap(false) {
		r.log.Warn("long-term memory unavailable; answering without it and queueing writes", "op", op, "error", err)
	}
	r.kick()
}

func unavailable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// Add prepares the records, stores them durably in the outbox and applies
// them to the primary when it is up. It returns nil once the records are
// in the outbox: they will reach the primary.
func (r *Resilient) Add(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := r.cfg.Now()
	body := outboxAdd{Records: make([]outboxRecord, len(recs))}
	for i, rec := range recs {
		p, err := Prepare(rec, now)
		if err != nil {
			return err
		}
		body.Records[i] = outboxRecord{Record: p, Vector: p.Vector}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := r.db.sql.ExecContext(ctx, `INSERT INTO outbox(op, body, created_at) VALUES('add', ?, ?)`, string(b), now.UnixNano()); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if !r.healthy.Load() {
		return nil
	}
	if err := r.flush(ctx); err != nil {
		r.failed("add", err)
	}
	return nil
}

// flush applies outbox entries to the primary in order, stopping at the
// first failure.
func (r *Resilient) flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	for {
		var seq int64
		var body string
		err := r.db.sql.QueryRowContext(ctx, `SELECT seq, body FROM outbox ORDER BY seq LIMIT 1`).Scan(&seq, &body)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return fmt.Errorf("outbox: %w", err)
		}
		var ob outboxAdd
		if err := json.Unmarshal([]byte(body), &ob); err != nil {
			r.log.Error("outbox entry unreadable; dropped", "seq", seq, "error", err)
		} else {
			recs := make([]Record, len(ob.Records))
			for i, o := range ob.Records {
				recs[i] = o.Record
				recs[i].Vector = o.Vector
			}
			c, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
			err := r.primary.Add(c, recs...)
			cancel()
			if err != nil {
				r.db.sql.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?`, seq)
				return err
			}
		}
		if _, err := r.db.sql.ExecContext(ctx, `DELETE FROM outbox WHERE seq = ?`, seq); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
}

func (r *Resilient) guard(op string) error {
	if !r.healthy.Load() {
		metrics.MemoryErrors.WithLabelValues(op).Inc()
		return fmt.Errorf("long-term memory %s: %w (retrying in the background)", op, ErrUnavailable)
	}
	return nil
}

// Search searches the primary; ErrUnavailable while it is down.
func (r *Resilient) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := q.Scope.Validate(); err != nil {
		return nil, err
	}
	if err := r.guard("search"); err != nil {
		return nil, err
	}
	c, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	h, err := r.primary.Search(c, q)
	if err != nil {
		r.failed("search", err)
	}
	return h, err
}

// List lists from the primary; ErrUnavailable while it is down.
func (r *Resilient) List(ctx context.Context, f Filter, limit int) ([]Record, error) {
	if err := f.Scope.Validate(); err != nil {
		return nil, err
	}
	if err := r.guard("list"); err != nil {
		return nil, err
	}
	c, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	l, err := r.primary.List(c, f, limit)
	if err != nil {
		r.failed("list", err)
	}
	return l, err
}

// Delete applies pending writes, then deletes from the primary;
// ErrUnavailable (nothing deleted) while it is down.
func (r *Resilient) Delete(ctx context.Context, f Filter) (int, error) {
	if err := f.Scope.Validate(); err != nil {
		return 0, err
	}
	if err := r.guard("delete"); err != nil {
		return 0, err
	}
	if err := r.flush(ctx); err != nil {
		r.failed("delete", err)
		return 0, err
	}
	c, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	n, err := r.primary.Delete(c, f)
	if err != nil {
		r.failed("delete", err)
	}
	return n, err
}

// Cleanup applies pending writes, then cleans the primary up.
func (r *Resilient) Cleanup(ctx context.Context, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) (int, error) {
	if err := r.guard("cleanup"); err != nil {
		return 0, err
	}
	if err := r.flush(ctx); err != nil {
		r.failed("cleanup", err)
		return 0, err
	}
	n, err := r.primary.Cleanup(ctx, now, maxPriority, olderThan, ttl)
	if err != nil {
		r.failed("cleanup", err)
	}
	return n, err
}

// Ping pings the primary.
func (r *Resilient) Ping(ctx context.Context) error { return r.primary.Ping(ctx) }

// Close stops the retry loop and closes the primary. Pending writes stay
// in the outbox for the next run.
func (r *Resilient) Close() error {
	r.cancel()
	<-r.done
	return r.primary.Close()
}

// loop is owned by the Resilient: it runs until Close. Woken by a failure
// (or at start), it pings the primary and replays the outbox, backing off
// exponentially while that fails.
func (r *Resilient) loop(ctx context.Context) {
	defer close(r.done)
	delay := r.cfg.MinBackoff
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-timer.C:
		}
		err := r.retry(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if !r.healthy.Swap(true) {
				r.log.Info("long-term memory is back; outbox replayed")
			}
			delay = r.cfg.MinBackoff
			continue
		}
		metrics.MemoryErrors.WithLabelValues("retry").Inc()
		if r.healthy.Swap(false) {
			r.log.Warn("long-term memory unavailable; answering without it and queueing writes", "op", "retry", "error", err)
		}
		r.log.Debug("long-term memory retry failed", "error", err, "next_in", delay)
		timer.Reset(delay)
		delay = min(delay*2, r.cfg.MaxBackoff)
	}
}

func (r *Resilient) retry(ctx context.Context) error {
	c, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	err := r.primary.Ping(c)
	cancel()
	if err != nil {
		return err
	}
	return r.flush(ctx)
}
