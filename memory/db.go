package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DBFile is the name of the embedded database file inside the data dir.
const DBFile = "sleuth.db"

// ErrCorrupt reports a database file that SQLite cannot read.
var ErrCorrupt = errors.New("database is corrupted")

// Defaults.
const (
	DefaultDataDir         = "./data"
	DefaultDedupeRetention = 7 * 24 * time.Hour
	defaultBusyTimeout     = 5 * time.Second
	// pruneEvery is how many claims pass between two prunes of old dedupe keys.
	pruneEvery = 256
)

// Config configures Open.
type Config struct {
	// DataDir holds the database file and session workspaces.
	// Optional; zero means DefaultDataDir. Created (0700) when missing.
	DataDir string
	// DedupeRetention is how long Claim remembers a key. Optional; zero
	// means DefaultDedupeRetention.
	DedupeRetention time.Duration
	// BusyTimeout is how long a writer waits for the database lock.
	// Optional; zero means 5 s.
	BusyTimeout time.Duration
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock, for tests. Optional; nil means time.Now.
	Now func() time.Time
}

// DB is sleuth's embedded database: one SQLite file (pure Go, WAL mode,
// foreign keys on) under the data dir, holding sessions, dedupe keys,
// long-term memories of the embedded store and the outbox of the
// Resilient wrapper. Other packages (jobs) may keep their own tables in
// the same file through SQL. Safe for concurrent use.
type DB struct {
	sql    *sql.DB
	dir    string
	path   string
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	claims sync.Mutex
	nclaim int

	sessions *SessionStore
}

// Open opens (creating when missing) the database under cfg.DataDir and
// migrates its schema to the current version. A file that is not a SQLite
// database, or a corrupted one, gives an error wrapping ErrCorrupt that
// says which file and what to do.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir
	}
	if cfg.DedupeRetention < 0 || cfg.BusyTimeout < 0 {
		return nil, errors.New("memory: DedupeRetention and BusyTimeout must not be negative")
	}
	if cfg.DedupeRetention == 0 {
		cfg.DedupeRetention = DefaultDedupeRetention
	}
	if cfg.BusyTimeout == 0 {
		cfg.BusyTimeout = defaultBusyTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("memory: data dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("memory: create data dir: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("memory: open %s: %w", path, err)
	}
	db := &DB{sql: sdb, dir: dir, path: path, cfg: cfg, log: log, now: cfg.Now}
	if err := db.migrate(ctx); err != nil {
		sdb.Close()
		if isCorrupt(err) {
			return nil, fmt.Errorf("%w: %s is not a sleuth database or is corrupted; move it aside (mv %s %s.bad) and start again, sleuth will create a new one: %v",
				ErrCorrupt, path, path, path, err)
		}
		return nil, fmt.Errorf("memory: migrate %s: %w", path, err)
	}
	db.sessions = &SessionStore{db: db}
	return db, nil
}

func isCorrupt(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "file is not a database") || strings.Contains(msg, "malformed")
}

// SQL returns the underlying database, for packages that keep their own
// tables in the same file (they should prefix table names with their
// package name and run their own migrations).
func (db *DB) SQL() *sql.DB { return db.sql }

// Dir returns the absolute data dir.
func (db *DB) Dir() string { return db.dir }

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Sessions returns the session store on this database.
func (db *DB) Sessions() *SessionStore { return db.sessions }

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// migrations are applied in order; PRAGMA user_version records how many
// ran. Never edit one that has shipped: append a new one.
var migrations = []string{
	// 1: sessions, dedupe, long-term memories, outbox.
	`
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
	key TEXT PRIMARY KEY,
	platform TEXT NOT NULL DEFAULT '',
	tenant TEXT NOT NULL DEFAULT '',
	channel TEXT NOT NULL DEFAULT '',
	thread TEXT NOT NULL DEFAULT '',
	user TEXT NOT NULL DEFAULT '',
	link TEXT NOT NULL DEFAULT '',
	summary TEXT NOT NULL DEFAULT '',
	plan TEXT NOT NULL DEFAULT '',
	status TEXT NOT NULL DEFAULT 'open',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_channel ON sessions(platform, tenant, channel, updated_at);
CREATE TABLE IF NOT EXISTS turns (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	session TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
	role TEXT NOT NULL,
	content TEXT NOT NULL,
	message_id TEXT NOT NULL DEFAULT '',
	fingerprints TEXT NOT NULL DEFAULT '',
	tokens INTEGER NOT NULL DEFAULT 0,
	steps INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_session ON turns(session, id);
CREATE TABLE IF NOT EXISTS files (
	session TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
	name TEXT NOT NULL,
	path TEXT NOT NULL,
	size INTEGER NOT NULL,
	sha256 TEXT NOT NULL DEFAULT '',
	platform_id TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session, name)
);
CREATE TABLE IF NOT EXISTS notes (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	session TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
	content TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_session ON notes(session, id);
CREATE TABLE IF NOT EXISTS dedupe (key TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS dedupe_created ON dedupe(created_at);
CREATE TABLE IF NOT EXISTS memories (
	id TEXT PRIMARY KEY,
	tenant TEXT NOT NULL,
	user TEXT NOT NULL DEFAULT '',
	channel TEXT NOT NULL DEFAULT '',
	scope TEXT NOT NULL,
	type TEXT NOT NULL,
	priority INTEGER NOT NULL,
	content TEXT NOT NULL,
	fingerprints TEXT NOT NULL DEFAULT '',
	source TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,
	vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_tenant ON memories(tenant, created_at);
CREATE INDEX IF NOT EXISTS memories_created ON memories(created_at);
CREATE TABLE IF NOT EXISTS outbox (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	op TEXT NOT NULL,
	body TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL
);
`,
}

func (db *DB) migrate(ctx context.Context) error {
	var version int
	if err := db.sql.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	// A quick read of the schema catches files that are not databases
	// before anything is written.
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this sleuth (%d); upgrade sleuth", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// getMeta reads a meta value; "" when missing.
func (db *DB) getMeta(ctx context.Context, key string) (string, error) {
	var v string
	err := db.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (db *DB) setMeta(ctx context.Context, key, value string) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
