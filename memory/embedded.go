package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EmbeddedConfig configures NewEmbedded.
type EmbeddedConfig struct {
	// DB is the database the memories live in. Required.
	DB *DB
	// Embedder embeds texts. Required.
	Embedder Embedder
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional; nil means time.Now.
	Now func() time.Time
}

// Embedded is the default long-term store: records in the embedded
// database, vectors as float32 blobs, exact cosine search. Each tenant's
// records and vectors are loaded into memory on first use and kept in
// sync on every write, so a search scans only the two partitions a scope
// can see (the user's and the channel's) with a tight dot-product loop.
// Safe for concurrent use; writes are serialised.
type Embedded struct {
	db  *DB
	emb Embedder
	dim int
	log *slog.Logger
	now func() time.Time

	mu      sync.RWMutex
	tenants map[string]*tenantIndex
}

var _ LongTerm = (*Embedded)(nil)

// tenantIndex holds one tenant's memories, partitioned by who may see
// them: "u\x00<user>" and "c\x00<channel>".
type tenantIndex struct {
	parts map[string]*partition
	byID  map[string]*partition
}

type partition struct {
	recs []Record  // without Vector
	vecs []float32 // len(recs)*dim, row i at [i*dim:(i+1)*dim]
	pos  map[string]int
}

func partKey(r Record) string {
	if r.Scope == ScopeUser {
		return "u\x00" + r.User
	}
	return "c\x00" + r.Channel
}

// NewEmbedded returns the embedded store. The embedder's name and
// dimension are recorded in the database; opening memories written by a
// different embedder fails with ErrDimension and the fix.
func NewEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	var errs []error
	if cfg.DB == nil {
		errs = append(errs, errors.New("memory: EmbeddedConfig.DB is required"))
	}
	if cfg.Embedder == nil {
		errs = append(errs, errors.New("memory: EmbeddedConfig.Embedder is required"))
	} else if cfg.Embedder.Dimension() <= 0 {
		errs = append(errs, errors.New("memory: embedder dimension must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &Embedded{db: cfg.DB, emb: cfg.Embedder, dim: cfg.Embedder.Dimension(), log: cfg.Logger, now: cfg.Now, tenants: map[string]*tenantIndex{}}
	if err := e.checkEmbedder(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Embedded) checkEmbedder(ctx context.Context) error {
	want := e.emb.Name() + "/" + strconv.Itoa(e.dim)
	have, err := e.db.getMeta(ctx, "embedder")
	if err != nil {
		return fmt.Errorf("memory: read embedder: %w", err)
	}
	if have == want {
		return nil
	}
	var n int
	if err := e.db.sql.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n); err != nil {
		return fmt.Errorf("memory: count memories: %w", err)
	}
	if have != "" && n > 0 {
		return fmt.Errorf("%w: the %d memories in %s were embedded with %s but the configured embedder is %s; "+
			"set EMBED_MODEL back to the embedder they were made with, or start a new store (another SLEUTH_DATA_DIR, or `sleuth memory forget --all` per scope)",
			ErrDimension, n, e.db.Path(), have, want)
	}
	return e.db.setMeta(ctx, "embedder", want)
}

// Embedder returns the store's embedder.
func (e *Embedded) Embedder() Embedder { return e.emb }

// tenant returns the tenant's index, loading it on first use. Callers
// hold e.mu (read or write); a read holder that finds it missing upgrades.
func (e *Embedded) tenant(ctx context.Context, tenant string) (*tenantIndex, error) {
	e.mu.RLock()
	ti := e.tenants[tenant]
	e.mu.RUnlock()
	if ti != nil {
		return ti, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tenantLocked(ctx, tenant)
}

func (e *Embedded) tenantLocked(ctx context.Context, tenant string) (*tenantIndex, error) {
	if ti := e.tenants[tenant]; ti != nil {
		return ti, nil
	}
	rows, err := e.db.sql.QueryContext(ctx, `SELECT id, tenant, user, channel, scope, type, priority, content, fingerprints, source, created_at, vector FROM memories WHERE tenant = ? ORDER BY created_at`, tenant)
	if err != nil {
		return nil, fmt.Errorf("load memories: %w", err)
	}
	defer rows.Close()
	ti := &tenantIndex{parts: map[string]*partition{}, byID: map[string]*partition{}}
	vec := make([]float32, e.dim)
	for rows.Next() {
		var r Record
		var fps, src string
		var c int64
		var blob []byte
		if err := rows.Scan(&r.ID, &r.Tenant, &r.User, &r.Channel, &r.Scope, &r.Type, &r.Priority, &r.Content, &fps, &src, &c, &blob); err != nil {
			return nil, fmt.Errorf("load memories: %w", err)
		}
		if len(blob) != 4*e.dim {
			return nil, fmt.Errorf("%w: memory %s has %d dimensions, the embedder %d", ErrDimension, r.ID, len(blob)/4, e.dim)
		}
		r.Fingerprints, r.CreatedAt = splitList(fps), fromUnixNano(c)
		_ = json.Unmarshal([]byte(src), &r.Source)
		decodeVector(blob, vec)
		ti.put(r, vec, e.dim)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load memories: %w", err)
	}
	e.tenants[tenant] = ti
	return ti, nil
}

func (ti *tenantIndex) put(r Record, vec []float32, dim int) {
	if old := ti.byID[r.ID]; old != nil {
		old.remove(r.ID, dim)
		delete(ti.byID, r.ID)
	}
	k := partKey(r)
	p := ti.parts[k]
	if p == nil {
		p = &partition{pos: map[string]int{}}
		ti.parts[k] = p
	}
	r.Vector = nil
	p.pos[r.ID] = len(p.recs)
	p.recs = append(p.recs, r)
	p.vecs = append(p.vecs, vec[:dim]...)
	ti.byID[r.ID] = p
}

func (ti *tenantIndex) remove(id string, dim int) {
	if p := ti.byID[id]; p != nil {
		p.remove(id, dim)
		delete(ti.byID, id)
	}
}

// remove swaps the last row into the removed one's place.
func (p *partition) remove(id string, dim int) {
	i, ok := p.pos[id]
	if !ok {
		return
	}
	last := len(p.recs) - 1
	if i != last {
		p.recs[i] = p.recs[last]
		copy(p.vecs[i*dim:(i+1)*dim], p.vecs[last*dim:])
		p.pos[p.recs[i].ID] = i
	}
	p.recs = p.recs[:last]
	p.vecs = p.vecs[:last*dim]
	delete(p.pos, id)
}

// visible returns the partitions a scope may see.
func (ti *tenantIndex) visible(s Scope) []*partition {
	var out []*partition
	if s.User != "" {
		if p := ti.parts["u\x00"+s.User]; p != nil {
			out = append(out, p)
		}
	}
	if s.Channel != "" {
		if p := ti.parts["c\x00"+s.Channel]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Add redacts, validates, embeds and stores the records in one
// transaction. A record with an existing ID replaces it.
func (e *Embedded) Add(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := e.now()
	prepared := make([]Record, len(recs))
	var texts []string
	var need []int
	for i, r := range recs {
		p, err := Prepare(r, now)
		if err != nil {
			return err
		}
		if p.Vector == nil {
			texts = append(texts, p.Content)
			need = append(need, i)
		} else if len(p.Vector) != e.dim {
			return fmt.Errorf("%w: vector has %d dimensions, the store %d", ErrDimension, len(p.Vector), e.dim)
		}
		prepared[i] = p
	}
	if len(texts) > 0 {
		vecs, err := e.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		for j, i := range need {
			if len(vecs[j]) != e.dim {
				return fmt.Errorf("%w: embedder returned %d dimensions, expected %d", ErrDimension, len(vecs[j]), e.dim)
			}
			prepared[i].Vector = vecs[j]
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	tx, err := e.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("add memories: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO memories(id, tenant, user, channel, scope, type, priority, content, fingerprints, source, created_at, vector)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET tenant=excluded.tenant, user=excluded.user, channel=excluded.channel, scope=excluded.scope,
		type=excluded.type, priority=excluded.priority, content=excluded.content, fingerprints=excluded.fingerprints, source=excluded.source,
		created_at=excluded.created_at, vector=excluded.vector`)
	if err != nil {
		return fmt.Errorf("add memories: %w", err)
	}
	defer stmt.Close()
	for _, r := range prepared {
		src, _ := json.Marshal(r.Source)
		if _, err := stmt.ExecContext(ctx, r.ID, r.Tenant, r.User, r.Channel, r.Scope, r.Type, r.Priority, r.Content,
			joinList(r.Fingerprints), string(src), r.CreatedAt.UnixNano(), encodeVector(r.Vector)); err != nil {
			return fmt.Errorf("add memories: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("add memories: %w", err)
	}
	for _, r := range prepared {
		// An id may move between tenants on replace; drop it everywhere.
		for _, ti := range e.tenants {
			ti.remove(r.ID, e.dim)
		}
		if ti := e.tenants[r.Tenant]; ti != nil {
			ti.put(r, r.Vector, e.dim)
		}
	}
	return nil
}

// Search returns the top hits visible in q.Scope with a score of at
// least the threshold, ordered by score, then priority.
func (e *Embedded) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := q.Scope.Validate(); err != nil {
		return nil, err
	}
	vec := q.Vector
	if vec == nil {
		if strings.TrimSpace(q.Text) == "" {
			return nil, fmt.Errorf("%w: a query needs text or a vector", ErrInvalid)
		}
		vs, err := e.emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		vec = vs[0]
	}
	if len(vec) != e.dim {
		return nil, fmt.Errorf("%w: query has %d dimensions, the store %d", ErrDimension, len(vec), e.dim)
	}
	minScore := q.MinScore
	if minScore <= 0 {
		minScore = e.emb.MinScore()
	}
	limit := q.limit()
	ti, err := e.tenant(ctx, q.Scope.Tenant)
	if err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	sc := scan{q: q, vec: vec, dim: e.dim, minScore: minScore, limit: limit,
		filtered: len(q.Types) > 0 || q.MinPriority > 0 || q.Fingerprint != "",
		// user memories made in a DM stay out of channels
		noDM: q.Scope.Channel != ""}
	var chunks []chunk
	rows := 0
	for _, p := range ti.visible(q.Scope) {
		rows += len(p.recs)
		for lo := 0; lo < len(p.recs); lo += scanChunk {
			chunks = append(chunks, chunk{p, lo, min(lo+scanChunk, len(p.recs))})
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(chunks), maxScanWorkers)
	if rows < parallelScanRows || workers <= 1 {
		var top []Hit
		for _, c := range chunks {
			top = sc.run(c, top)
		}
		return top, nil
	}
	// Large scopes: the chunks are shared out to workers, each keeping its
	// own top-k; the results are merged. Search waits for all workers.
	tops := make([][]Hit, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) || ctx.Err() != nil {
					return
				}
				tops[w] = sc.run(chunks[i], tops[w])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var top []Hit
	for _, t := range tops {
		for _, h := range t {
			if len(top) < limit || better(h.Score, &h.Record, top[len(top)-1]) {
				top = insertHit(top, h, limit)
			}
		}
	}
	return top, nil
}

// Scan tuning: below parallelScanRows one goroutine scans; above, chunks
// of scanChunk rows are shared among up to maxScanWorkers goroutines.
const (
	parallelScanRows = 20_000
	scanChunk        = 8192
	maxScanWorkers   = 8
)

type chunk struct {
	p      *partition
	lo, hi int
}

type scan struct {
	q        Query
	vec      []float32
	dim      int
	minScore float32
	limit    int
	filtered bool
	noDM     bool
}

// run scans one chunk into top (sorted, at most limit long).
func (sc *scan) run(c chunk, top []Hit) []Hit {
	dim, vec := sc.dim, sc.vec
	recs, vecs := c.p.recs, c.p.vecs
	for i := c.lo; i < c.hi; i++ {
		s := dot(vec, vecs[i*dim:(i+1)*dim])
		if s < sc.minScore {
			continue
		}
		r := &recs[i]
		if sc.noDM && r.Scope == ScopeUser && r.Channel == "" {
			continue
		}
		if sc.filtered && !sc.q.Match(*r) {
			continue
		}
		if len(top) == sc.limit && !better(s, r, top[sc.limit-1]) {
			continue
		}
		top = insertHit(top, Hit{Record: *r, Score: s}, sc.limit)
	}
	return top
}

func better(s float32, r *Record, h Hit) bool {
	if s != h.Score {
		return s > h.Score
	}
	if r.Priority != h.Priority {
		return r.Priority > h.Priority
	}
	return r.CreatedAt.After(h.CreatedAt)
}

// insertHit keeps top sorted and at most limit long.
func insertHit(top []Hit, h Hit, limit int) []Hit {
	i := len(top)
	for i > 0 && better(h.Score, &h.Record, top[i-1]) {
		i--
	}
	top = slices.Insert(top, i, h)
	if len(top) > limit {
		top = top[:limit]
	}
	return top
}

// List returns visible records matching f, newest first; limit <= 0
// means all.
func (e *Embedded) List(ctx context.Context, f Filter, limit int) ([]Record, error) {
	if err := f.Scope.Validate(); err != nil {
		return nil, err
	}
	ti, err := e.tenant(ctx, f.Scope.Tenant)
	if err != nil {
		return nil, err
	}
	e.mu.RLock()
	var out []Record
	for _, p := range ti.visible(f.Scope) {
		for _, r := range p.recs {
			if f.Scope.Allows(r) && f.Match(r) {
				out = append(out, r)
			}
		}
	}
	e.mu.RUnlock()
	sortNewest(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func sortNewest(out []Record) {
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Delete removes the visible records matching f and returns how many.
func (e *Embedded) Delete(ctx context.Context, f Filter) (int, error) {
	if err := f.Scope.Validate(); err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ti, err := e.tenantLocked(ctx, f.Scope.Tenant)
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, p := range ti.visible(f.Scope) {
		for _, r := range p.recs {
			if f.Scope.Allows(r) && f.Match(r) {
				ids = append(ids, r.ID)
			}
		}
	}
	if err := e.deleteIDs(ctx, ids); err != nil {
		return 0, err
	}
	for _, id := range ids {
		ti.remove(id, e.dim)
	}
	return len(ids), nil
}

func (e *Embedded) deleteIDs(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := e.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete memories: %w", err)
	}
	defer tx.Rollback()
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := `DELETE FROM memories WHERE id IN (?` + strings.Repeat(",?", len(chunk)-1) + `)`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("delete memories: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete memories: %w", err)
	}
	return nil
}

// Cleanup removes, across tenants, records with priority <= maxPriority
// older than olderThan and records older than their type's TTL.
func (e *Embedded) Cleanup(ctx context.Context, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rows, err := e.db.sql.QueryContext(ctx, `SELECT id, tenant, type, priority, created_at FROM memories`)
	if err != nil {
		return 0, fmt.Errorf("cleanup: %w", err)
	}
	var ids []string
	var tenants []string
	for rows.Next() {
		var r Record
		var c int64
		if err := rows.Scan(&r.ID, &r.Tenant, &r.Type, &r.Priority, &c); err != nil {
			rows.Close()
			return 0, fmt.Errorf("cleanup: %w", err)
		}
		r.CreatedAt = fromUnixNano(c)
		if Expired(r, now, maxPriority, olderThan, ttl) {
			ids = append(ids, r.ID)
			tenants = append(tenants, r.Tenant)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("cleanup: %w", err)
	}
	if err := e.deleteIDs(ctx, ids); err != nil {
		return 0, err
	}
	for i, id := range ids {
		if ti := e.tenants[tenants[i]]; ti != nil {
			ti.remove(id, e.dim)
		}
	}
	return len(ids), nil
}

// Ping checks the database.
func (e *Embedded) Ping(ctx context.Context) error { return e.db.sql.PingContext(ctx) }

// Close drops the caches; the DB is closed by its owner.
func (e *Embedded) Close() error {
	e.mu.Lock()
	e.tenants = map[string]*tenantIndex{}
	e.mu.Unlock()
	return nil
}
