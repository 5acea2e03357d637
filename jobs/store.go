package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Run statuses.
const (
	StatusRunning   = "running"
	StatusDelivered = "delivered" // posted; the platform returned a message id
	StatusDone      = "done"      // finished; the job has no target
	StatusSkipped   = "skipped"   // nothing to post (skip_empty) or overlap
	StatusFailed    = "failed"
)

// Run is one run of a job, keyed by job and scheduled time.
type Run struct {
	Job       string    `json:"job"`
	Scheduled time.Time `json:"scheduled"`
	Manual    bool      `json:"manual,omitempty"` // jobs run / RunNow
	Instance  string    `json:"instance"`         // the scheduler that ran it
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts"`
	Error     string    `json:"error,omitempty"`
	MessageID string    `json:"message_id,omitempty"`
	Target    string    `json:"target,omitempty"`
	Summary   string    `json:"summary,omitempty"` // one line: what the run did
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished,omitempty"`
}

// schema is the jobs package's own tables in the shared database file.
// CREATE … IF NOT EXISTS keeps it idempotent; add columns with a new
// statement, never by editing these.
const schema = `
CREATE TABLE IF NOT EXISTS jobs_runs (
	job TEXT NOT NULL,
	scheduled_at INTEGER NOT NULL,
	manual INTEGER NOT NULL DEFAULT 0,
	instance TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	error TEXT NOT NULL DEFAULT '',
	message_id TEXT NOT NULL DEFAULT '',
	target TEXT NOT NULL DEFAULT '',
	summary TEXT NOT NULL DEFAULT '',
	started_at INTEGER NOT NULL,
	finished_at INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (job, scheduled_at)
);
CREATE INDEX IF NOT EXISTS jobs_runs_started ON jobs_runs(started_at);
CREATE TABLE IF NOT EXISTS jobs_state (
	job TEXT PRIMARY KEY,
	first_seen INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs_offsets (
	job TEXT NOT NULL,
	path TEXT NOT NULL,
	inode INTEGER NOT NULL,
	size INTEGER NOT NULL,
	offset INTEGER NOT NULL,
	lines INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (job, path)
);
`

type store struct{ db *sql.DB }

func (st *store) migrate(ctx context.Context) error {
	if _, err := st.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	return nil
}

// firstSeen records when this database first scheduled job and returns it.
func (st *store) firstSeen(ctx context.Context, job string, now time.Time) (time.Time, error) {
	if _, err := st.db.ExecContext(ctx, `INSERT INTO jobs_state(job, first_seen) VALUES(?, ?) ON CONFLICT(job) DO NOTHING`, job, now.UnixNano()); err != nil {
		return time.Time{}, fmt.Errorf("jobs: first seen: %w", err)
	}
	var n int64
	if err := st.db.QueryRowContext(ctx, `SELECT first_seen FROM jobs_state WHERE job = ?`, job).Scan(&n); err != nil {
		return time.Time{}, fmt.Errorf("jobs: first seen: %w", err)
	}
	return time.Unix(0, n).UTC(), nil
}

// claim inserts the run as running, in one write transaction: it fails
// with ErrClaimed when the (job, scheduled time) row exists, and records
// the run as skipped and fails with ErrOverlap when another run of the job
// started after overlapSince is still running.
func (st *store) claim(ctx context.Context, r Run, overlapSince time.Time) error {
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jobs: claim: %w", err)
	}
	defer tx.Rollback()
	var other int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM jobs_runs WHERE job = ? AND status = ? AND started_at > ? AND scheduled_at <> ? LIMIT 1`,
		r.Job, StatusRunning, overlapSince.UnixNano(), r.Scheduled.UnixNano()).Scan(&other)
	overlap := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("jobs: claim: %w", err)
	}
	status, msg := StatusRunning, ""
	if overlap {
		status, msg = StatusSkipped, ErrOverlap.Error()
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO jobs_runs(job, scheduled_at, manual, instance, status, error, target, started_at, finished_at)
		VALUES(?,?,?,?,?,?,?,?,?) ON CONFLICT(job, scheduled_at) DO NOTHING`,
		r.Job, r.Scheduled.UnixNano(), boolInt(r.Manual), r.Instance, status, msg, r.Target, r.Started.UnixNano(), finishedIf(overlap, r.Started))
	if err != nil {
		return fmt.Errorf("jobs: claim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("jobs: claim: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jobs: claim: %w", err)
	}
	switch {
	case n == 0:
		return ErrClaimed
	case overlap:
		return ErrOverlap
	}
	return nil
}

func finishedIf(b bool, t time.Time) int64 {
	if b {
		return t.UnixNano()
	}
	return 0
}

// finish records the outcome of a claimed run.
func (st *store) finish(ctx context.Context, r Run) error {
	_, err := st.db.ExecContext(ctx, `UPDATE jobs_runs SET status = ?, attempts = ?, error = ?, message_id = ?, summary = ?, finished_at = ? WHERE job = ? AND scheduled_at = ?`,
		r.Status, r.Attempts, r.Error, r.MessageID, r.Summary, r.Finished.UnixNano(), r.Job, r.Scheduled.UnixNano())
	if err != nil {
		return fmt.Errorf("jobs: record run: %w", err)
	}
	return nil
}

const runCols = `job, scheduled_at, manual, instance, status, attempts, error, message_id, target, summary, started_at, finished_at`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var sched, started, finished int64
	var manual int
	if err := sc.Scan(&r.Job, &sched, &manual, &r.Instance, &r.Status, &r.Attempts, &r.Error, &r.MessageID, &r.Target, &r.Summary, &started, &finished); err != nil {
		return Run{}, err
	}
	r.Scheduled, r.Started, r.Manual = time.Unix(0, sched).UTC(), time.Unix(0, started).UTC(), manual != 0
	if finished != 0 {
		r.Finished = time.Unix(0, finished).UTC()
	}
	return r, nil
}

// history returns runs, newest first; job "" means all jobs.
func (st *store) history(ctx context.Context, job string, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = 20
	}
	q := `SELECT ` + runCols + ` FROM jobs_runs`
	args := []any{}
	if job != "" {
		q += ` WHERE job = ?`
		args = append(args, job)
	}
	q += ` ORDER BY started_at DESC, scheduled_at DESC LIMIT ?`
	args = append(args, limit)
	rows, err := st.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("jobs: history: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("jobs: history: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// exists reports whether the occurrence was claimed.
func (st *store) exists(ctx context.Context, job string, at time.Time) (bool, error) {
	var one int
	err := st.db.QueryRowContext(ctx, `SELECT 1 FROM jobs_runs WHERE job = ? AND scheduled_at = ?`, job, at.UnixNano()).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("jobs: run exists: %w", err)
	}
	return true, nil
}

// consecutiveFailures counts the job's latest finished runs that failed,
// newest first, up to the first that did not (overlap skips are ignored).
func (st *store) consecutiveFailures(ctx context.Context, job string) (int, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT status FROM jobs_runs WHERE job = ? AND status <> ? AND error <> ? ORDER BY started_at DESC, scheduled_at DESC LIMIT 10000`,
		job, StatusRunning, ErrOverlap.Error())
	if err != nil {
		return 0, fmt.Errorf("jobs: failures: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return 0, fmt.Errorf("jobs: failures: %w", err)
		}
		if s != StatusFailed {
			break
		}
		n++
	}
	return n, rows.Err()
}

// prune deletes finished run records started before cut.
func (st *store) prune(ctx context.Context, cut time.Time) (int, error) {
	res, err := st.db.ExecContext(ctx, `DELETE FROM jobs_runs WHERE started_at < ? AND status <> ?`, cut.UnixNano(), StatusRunning)
	if err != nil {
		return 0, fmt.Errorf("jobs: prune runs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// offset is how far a log-report job has read one file.
type offset struct {
	Inode  uint64
	Size   int64
	Offset int64
	Lines  int64 // '\n' before Offset
}

func (st *store) offset(ctx context.Context, job, path string) (offset, bool, error) {
	var o offset
	var ino int64
	err := st.db.QueryRowContext(ctx, `SELECT inode, size, offset, lines FROM jobs_offsets WHERE job = ? AND path = ?`, job, path).Scan(&ino, &o.Size, &o.Offset, &o.Lines)
	if errors.Is(err, sql.ErrNoRows) {
		return offset{}, false, nil
	}
	if err != nil {
		return offset{}, false, fmt.Errorf("jobs: read offset: %w", err)
	}
	o.Inode = uint64(ino)
	return o, true, nil
}

func (st *store) setOffset(ctx context.Context, job, path string, o offset, now time.Time) error {
	_, err := st.db.ExecContext(ctx, `INSERT INTO jobs_offsets(job, path, inode, size, offset, lines, updated_at) VALUES(?,?,?,?,?,?,?)
		ON CONFLICT(job, path) DO UPDATE SET inode = excluded.inode, size = excluded.size, offset = excluded.offset, lines = excluded.lines, updated_at = excluded.updated_at`,
		job, path, int64(o.Inode), o.Size, o.Offset, o.Lines, now.UnixNano())
	if err != nil {
		return fmt.Errorf("jobs: save offset: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
