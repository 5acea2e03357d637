package memory

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Session statuses.
const (
	StatusOpen        = "open"
	StatusWaiting     = "waiting"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// SessionStore implements Sessions on the embedded database. Sessions,
// turns, file references and notes survive restarts; the files themselves
// live under DataDir/sessions/<safe id>/files/. Safe for concurrent use.
type SessionStore struct {
	db *DB
}

var _ Sessions = (*SessionStore)(nil)

// Ensure returns the session, creating it from s when missing. Status
// defaults to "open".
func (s *SessionStore) Ensure(ctx context.Context, in Session) (Session, error) {
	if in.Key == "" {
		return Session{}, errors.New("memory: session key is required")
	}
	now := s.db.now().UTC()
	if in.Status == "" {
		in.Status = StatusOpen
	}
	_, err := s.db.sql.ExecContext(ctx, `INSERT INTO sessions(key, platform, tenant, channel, thread, user, link, summary, plan, status, created_at, updated_at)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO NOTHING`,
		in.Key, in.Platform, in.Tenant, in.Channel, in.Thread, in.User, in.Link, in.Summary, in.Plan, in.Status, now.UnixNano(), now.UnixNano())
	if err != nil {
		return Session{}, fmt.Errorf("ensure session: %w", err)
	}
	return s.Get(ctx, in.Key)
}

const sessionCols = `key, platform, tenant, channel, thread, user, link, summary, plan, status, created_at, updated_at`

func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var ss Session
	var c, u int64
	err := sc.Scan(&ss.Key, &ss.Platform, &ss.Tenant, &ss.Channel, &ss.Thread, &ss.User, &ss.Link, &ss.Summary, &ss.Plan, &ss.Status, &c, &u)
	ss.CreatedAt, ss.UpdatedAt = fromUnixNano(c), fromUnixNano(u)
	return ss, err
}

// Get returns the session or ErrNotFound.
func (s *SessionStore) Get(ctx context.Context, key string) (Session, error) {
	ss, err := scanSession(s.db.sql.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	return ss, nil
}

// Exists reports whether the session exists.
func (s *SessionStore) Exists(ctx context.Context, key string) (bool, error) {
	var one int
	err := s.db.sql.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE key = ?`, key).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("session exists: %w", err)
	}
	return true, nil
}

func (s *SessionStore) setField(ctx context.Context, key, col, val string) error {
	res, err := s.db.sql.ExecContext(ctx, `UPDATE sessions SET `+col+` = ?, updated_at = ? WHERE key = ?`, val, s.db.now().UnixNano(), key)
	if err != nil {
		return fmt.Errorf("set session %s: %w", col, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session %q: %w", key, ErrNotFound)
	}
	return nil
}

// SetStatus sets the session's status.
func (s *SessionStore) SetStatus(ctx context.Context, key, status string) error {
	return s.setField(ctx, key, "status", status)
}

// SetSummary replaces the rolling summary of older turns.
func (s *SessionStore) SetSummary(ctx context.Context, key, summary string) error {
	return s.setField(ctx, key, "summary", summary)
}

// SetPlan replaces the current plan.
func (s *SessionStore) SetPlan(ctx context.Context, key, plan string) error {
	return s.setField(ctx, key, "plan", plan)
}

// AppendTurn appends a turn to an existing session (ErrNotFound
// otherwise) and returns it with ID and CreatedAt set.
func (s *SessionStore) AppendTurn(ctx context.Context, t Turn) (Turn, error) {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = s.db.now().UTC()
	}
	tx, err := s.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return Turn{}, fmt.Errorf("append turn: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET updated_at = ? WHERE key = ?`, t.CreatedAt.UnixNano(), t.Session)
	if err != nil {
		return Turn{}, fmt.Errorf("append turn: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Turn{}, fmt.Errorf("append turn: session %q: %w", t.Session, ErrNotFound)
	}
	res, err = tx.ExecContext(ctx, `INSERT INTO turns(session, role, content, message_id, fingerprints, tokens, steps, failed, created_at) VALUES(?,?,?,?,?,?,?,?,?)`,
		t.Session, t.Role, t.Content, t.MessageID, joinList(t.Fingerprints), t.Tokens, t.Steps, boolInt(t.Failed), t.CreatedAt.UnixNano())
	if err != nil {
		return Turn{}, fmt.Errorf("append turn: %w", err)
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return Turn{}, fmt.Errorf("append turn: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Turn{}, fmt.Errorf("append turn: %w", err)
	}
	return t, nil
}

// Turns returns the last limit turns in order (limit <= 0: all).
func (s *SessionStore) Turns(ctx context.Context, key string, limit int) ([]Turn, error) {
	q := `SELECT id, session, role, content, message_id, fingerprints, tokens, steps, failed, created_at FROM turns WHERE session = ? ORDER BY id DESC`
	args := []any{key}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("turns: %w", err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var t Turn
		var fps string
		var failed int
		var c int64
		if err := rows.Scan(&t.ID, &t.Session, &t.Role, &t.Content, &t.MessageID, &fps, &t.Tokens, &t.Steps, &failed, &c); err != nil {
			return nil, fmt.Errorf("turns: %w", err)
		}
		t.Fingerprints, t.Failed, t.CreatedAt = splitList(fps), failed != 0, fromUnixNano(c)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("turns: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// AddFile records an attachment of the session; a file of the same name
// is replaced.
func (s *SessionStore) AddFile(ctx context.Context, f File) error {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = s.db.now().UTC()
	}
	_, err := s.db.sql.ExecContext(ctx, `INSERT INTO files(session, name, path, size, sha256, platform_id, created_at) VALUES(?,?,?,?,?,?,?)
		ON CONFLICT(session, name) DO UPDATE SET path = excluded.path, size = excluded.size, sha256 = excluded.sha256, platform_id = excluded.platform_id, created_at = excluded.created_at`,
		f.Session, f.Name, f.Path, f.Size, f.SHA256, f.PlatformID, f.CreatedAt.UnixNano())
	if err != nil {
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			return fmt.Errorf("add file: session %q: %w", f.Session, ErrNotFound)
		}
		return fmt.Errorf("add file: %w", err)
	}
	return nil
}

// Files returns the session's attachments in the order they were added.
func (s *SessionStore) Files(ctx context.Context, key string) ([]File, error) {
	rows, err := s.db.sql.QueryContext(ctx, `SELECT session, name, path, size, sha256, platform_id, created_at FROM files WHERE session = ? ORDER BY created_at, name`, key)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		var f File
		var c int64
		if err := rows.Scan(&f.Session, &f.Name, &f.Path, &f.Size, &f.SHA256, &f.PlatformID, &c); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		f.CreatedAt = fromUnixNano(c)
		out = append(out, f)
	}
	return out, rows.Err()
}

// AddNote appends a working note.
func (s *SessionStore) AddNote(ctx context.Context, n Note) error {
	if n.CreatedAt.IsZero() {
		n.CreatedAt = s.db.now().UTC()
	}
	_, err := s.db.sql.ExecContext(ctx, `INSERT INTO notes(session, content, created_at) VALUES(?,?,?)`, n.Session, n.Content, n.CreatedAt.UnixNano())
	if err != nil {
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			return fmt.Errorf("add note: session %q: %w", n.Session, ErrNotFound)
		}
		return fmt.Errorf("add note: %w", err)
	}
	return nil
}

// Notes returns the session's notes in order.
func (s *SessionStore) Notes(ctx context.Context, key string) ([]Note, error) {
	rows, err := s.db.sql.QueryContext(ctx, `SELECT session, content, created_at FROM notes WHERE session = ? ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	defer rows.Close()
	var out []Note
	for rows.Next() {
		var n Note
		var c int64
		if err := rows.Scan(&n.Session, &n.Content, &c); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		n.CreatedAt = fromUnixNano(c)
		out = append(out, n)
	}
	return out, rows.Err()
}

// Workspace returns DataDir/sessions/<safe id>/files, creating it (0700).
// The safe id is the key with unsafe characters replaced, plus a short
// hash of the key so that distinct keys never share a folder.
func (s *SessionStore) Workspace(key string) (string, error) {
	if key == "" {
		return "", errors.New("memory: session key is required")
	}
	dir := filepath.Join(s.db.dir, "sessions", SafeID(key), "files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	return dir, nil
}

// SafeID turns a session key into a file name: letters, digits, '.', '-'
// and '_' only, at most 80 characters, plus 12 hex digits of its SHA-256.
func SafeID(key string) string {
	var b strings.Builder
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 80 {
			break
		}
	}
	sum := sha256.Sum256([]byte(key))
	return b.String() + "-" + hex.EncodeToString(sum[:6])
}

// ListSessions returns sessions of a platform+tenant+channel updated in
// [from, to), oldest first.
func (s *SessionStore) ListSessions(ctx context.Context, platform, tenant, channel string, from, to time.Time) ([]Session, error) {
	rows, err := s.db.sql.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE platform = ? AND tenant = ? AND channel = ? AND updated_at >= ? AND updated_at < ? ORDER BY updated_at`,
		platform, tenant, channel, from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, ss)
	}
	return out, rows.Err()
}

// Claim records key once: true the first time, false for a duplicate,
// also across restarts. Keys older than the dedupe retention are pruned
// now and then, after which a key could be claimed again.
func (s *SessionStore) Claim(ctx context.Context, key string) (bool, error) {
	now := s.db.now()
	res, err := s.db.sql.ExecContext(ctx, `INSERT INTO dedupe(key, created_at) VALUES(?, ?) ON CONFLICT(key) DO NOTHING`, key, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("claim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim: %w", err)
	}
	s.db.claims.Lock()
	s.db.nclaim++
	prune := s.db.nclaim%pruneEvery == 1
	s.db.claims.Unlock()
	if prune {
		if _, err := s.PruneClaims(ctx); err != nil {
			s.db.log.Warn("prune dedupe keys", "error", err)
		}
	}
	return n == 1, nil
}

// PruneClaims deletes dedupe keys older than the retention and returns
// how many.
func (s *SessionStore) PruneClaims(ctx context.Context) (int, error) {
	cut := s.db.now().Add(-s.db.cfg.DedupeRetention).UnixNano()
	res, err := s.db.sql.ExecContext(ctx, `DELETE FROM dedupe WHERE created_at < ?`, cut)
	if err != nil {
		return 0, fmt.Errorf("prune dedupe: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// joinList stores a list of ids as "\x1f"-separated text.
func joinList(l []string) string { return strings.Join(l, "\x1f") }

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x1f")
}
