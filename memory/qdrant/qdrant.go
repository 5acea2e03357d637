// Package qdrant stores sleuth's long-term memories in Qdrant over gRPC
// (github.com/qdrant/go-client). It has the same behaviour as the embedded
// store (the memorytest suite runs on both): the scope filter is built
// here, from the Scope argument, on every search, list and delete.
//
// The collection is created on first use with the embedder's dimension,
// cosine distance, the embedder's name in its metadata, and payload
// indexes on tenant, user, channel, scope, type, priority, created_at,
// fingerprints and dm. Nothing is dialled or created in New: a Qdrant that
// is down at start makes the first calls fail with memory.ErrUnavailable,
// and they succeed once it is back (wrap the store in memory.Resilient to
// keep answering and to queue writes meanwhile).
package qdrant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sleuth-bot/sleuth/memory"
)

// Defaults.
const (
	DefaultCollection = "sleuth_memories"
	// DefaultPort is Qdrant's gRPC port (6333 is its REST port).
	DefaultPort    = 6334
	defaultTimeout = 5 * time.Second
	scrollPage     = 256
	// reconnectMaxDelay caps the gRPC reconnect backoff.
	reconnectMaxDelay = 3 * time.Second
)

// Config configures New.
type Config struct {
	// URL of Qdrant's gRPC endpoint (QDRANT_URL): "http://host:6334",
	// "https://host:6334" (TLS) or "host:port". TLS is used for https and
	// for port 443. A REST URL on port 6333 is moved to 6334. Required.
	URL string
	// APIKey (QDRANT_API_KEY) is sent as the api-key header. Optional.
	APIKey string
	// Collection name. Optional; zero means DefaultCollection.
	Collection string
	// Embedder embeds texts; its dimension sizes the collection. Required.
	Embedder memory.Embedder
	// Timeout bounds each call. Optional; zero means 5 s.
	Timeout time.Duration
	// DialOptions are extra gRPC options (tests). Optional.
	DialOptions []grpc.DialOption
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional; nil means time.Now.
	Now func() time.Time
}

// Store is a memory.LongTerm in Qdrant. Safe for concurrent use.
type Store struct {
	client *qdrant.Client
	points qdrant.PointsClient
	coll   string
	emb    memory.Embedder
	dim    int
	tmo    time.Duration
	log    *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	ready bool
}

var _ memory.LongTerm = (*Store)(nil)

// New validates cfg and prepares a client; it does not contact Qdrant.
func New(cfg Config) (*Store, error) {
	var errs []error
	if cfg.URL == "" {
		errs = append(errs, errors.New("qdrant: URL is required"))
	}
	if cfg.Embedder == nil {
		errs = append(errs, errors.New("qdrant: Embedder is required"))
	}
	if cfg.Timeout < 0 {
		errs = append(errs, errors.New("qdrant: Timeout must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	host, port, useTLS, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Reconnect within seconds once Qdrant is back (gRPC's default backoff
	// grows to two minutes).
	opts := append([]grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectMaxDelay},
		MinConnectTimeout: 2 * time.Second,
	})}, cfg.DialOptions...)
	client, err := qdrant.NewClient(&qdrant.Config{
		Host: host, Port: port, APIKey: cfg.APIKey, UseTLS: useTLS,
		SkipCompatibilityCheck: true, PoolSize: 1, GrpcOptions: opts,
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: client: %w", err)
	}
	return &Store{client: client, points: client.GetPointsClient(), coll: cfg.Collection, emb: cfg.Embedder,
		dim: cfg.Embedder.Dimension(), tmo: cfg.Timeout, log: cfg.Logger, now: cfg.Now}, nil
}

func parseURL(raw string) (host string, port int, useTLS bool, err error) {
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, perr := url.Parse(raw)
	if perr != nil || u.Hostname() == "" {
		return "", 0, false, fmt.Errorf("qdrant: URL %q is not host:port or http(s)://host:port", raw)
	}
	host, port = u.Hostname(), DefaultPort
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return "", 0, false, fmt.Errorf("qdrant: URL %q: bad port", raw)
		}
	}
	if port == 6333 {
		port = DefaultPort
	}
	useTLS = u.Scheme == "https" || port == 443
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return "", 0, false, fmt.Errorf("qdrant: URL %q: bad host", raw)
	}
	return host, port, useTLS, nil
}

// wrap turns transport failures into memory.ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, memory.ErrDimension) || errors.Is(err, memory.ErrScope) || errors.Is(err, memory.ErrInvalid) {
		return err
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		return fmt.Errorf("qdrant %s: %w: %w", op, memory.ErrUnavailable, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("qdrant %s: %w: %w", op, memory.ErrUnavailable, err)
	}
	return fmt.Errorf("qdrant %s: %w", op, err)
}

// indexes are the payload fields the store filters on.
var indexes = []struct {
	field string
	typ   qdrant.FieldType
}{
	{"tenant", qdrant.FieldType_FieldTypeKeyword},
	{"user", qdrant.FieldType_FieldTypeKeyword},
	{"channel", qdrant.FieldType_FieldTypeKeyword},
	{"scope", qdrant.FieldType_FieldTypeKeyword},
	{"type", qdrant.FieldType_FieldTypeKeyword},
	{"priority", qdrant.FieldType_FieldTypeInteger},
	{"created_at", qdrant.FieldType_FieldTypeInteger},
	{"fingerprints", qdrant.FieldType_FieldTypeKeyword},
	{"dm", qdrant.FieldType_FieldTypeBool},
}

// ensure creates the collection on first use, or checks that an existing
// one has the embedder's dimension (memory.ErrDimension otherwise).
func (s *Store) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.tmo)
	defer cancel()
	exists, err := s.client.CollectionExists(ctx, s.coll)
	if err != nil {
		return wrap("collection exists", err)
	}
	if exists {
		info, err := s.client.GetCollectionInfo(ctx, s.coll)
		if err != nil {
			return wrap("collection info", err)
		}
		size := int(info.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize())
		name := info.GetConfig().GetMetadata()["embedder"].GetStringValue()
		if size != s.dim || (name != "" && name != s.emb.Name()) {
			return fmt.Errorf("%w: Qdrant collection %q holds %d-dimension vectors from embedder %q, but the configured embedder %q gives %d; "+
				"set EMBED_MODEL back to the one the collection was made with, or use a new collection (QDRANT_COLLECTION) and let sleuth create it",
				memory.ErrDimension, s.coll, size, name, s.emb.Name(), s.dim)
		}
	} else {
		err := s.client.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: s.coll,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(s.dim), Distance: qdrant.Distance_Cosine}),
			Metadata:       qdrant.NewValueMap(map[string]any{"embedder": s.emb.Name(), "dimension": s.dim}),
		})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return wrap("create collection", err)
		}
		s.log.Info("qdrant collection created", "collection", s.coll, "dimension", s.dim, "embedder", s.emb.Name())
	}
	wait := true
	for _, ix := range indexes {
		t := ix.typ
		if _, err := s.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: s.coll, FieldName: ix.field, FieldType: &t, Wait: &wait,
		}); err != nil {
			return wrap("create index "+ix.field, err)
		}
	}
	s.ready = true
	return nil
}

func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := s.ensure(ctx); err != nil {
		return nil, nil, err
	}
	c, cancel := context.WithTimeout(ctx, s.tmo)
	return c, cancel, nil
}

// Embedder returns the store's embedder.
func (s *Store) Embedder() memory.Embedder { return s.emb }

// Add redacts, validates, embeds and upserts the records (waiting for the
// write to be applied). A record with an existing ID replaces it.
func (s *Store) Add(ctx context.Context, recs ...memory.Record) error {
	if len(recs) == 0 {
		return nil
	}
	now := s.now()
	prepared := make([]memory.Record, len(recs))
	var texts []string
	var need []int
	for i, r := range recs {
		p, err := memory.Prepare(r, now)
		if err != nil {
			return err
		}
		if p.Vector == nil {
			texts = append(texts, p.Content)
			need = append(need, i)
		} else if len(p.Vector) != s.dim {
			return fmt.Errorf("%w: vector has %d dimensions, the store %d", memory.ErrDimension, len(p.Vector), s.dim)
		}
		prepared[i] = p
	}
	if len(texts) > 0 {
		vecs, err := s.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		for j, i := range need {
			if len(vecs[j]) != s.dim {
				return fmt.Errorf("%w: embedder returned %d dimensions, expected %d", memory.ErrDimension, len(vecs[j]), s.dim)
			}
			prepared[i].Vector = vecs[j]
		}
	}
	pts := make([]*qdrant.PointStruct, len(prepared))
	for i, r := range prepared {
		pts[i] = &qdrant.PointStruct{Id: qdrant.NewID(r.ID), Vectors: qdrant.NewVectorsDense(r.Vector), Payload: payload(r)}
	}
	c, cancel, err := s.call(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	wait := true
	_, err = s.client.Upsert(c, &qdrant.UpsertPoints{CollectionName: s.coll, Wait: &wait, Points: pts})
	return wrap("upsert", err)
}

func payload(r memory.Record) map[string]*qdrant.Value {
	fps := make([]*qdrant.Value, len(r.Fingerprints))
	for i, f := range r.Fingerprints {
		fps[i] = qdrant.NewValueString(f)
	}
	return map[string]*qdrant.Value{
		"tenant":         qdrant.NewValueString(r.Tenant),
		"user":           qdrant.NewValueString(r.User),
		"channel":        qdrant.NewValueString(r.Channel),
		"scope":          qdrant.NewValueString(r.Scope),
		"type":           qdrant.NewValueString(r.Type),
		"priority":       qdrant.NewValueInt(int64(r.Priority)),
		"content":        qdrant.NewValueString(r.Content),
		"fingerprints":   {Kind: &qdrant.Value_ListValue{ListValue: &qdrant.ListValue{Values: fps}}},
		"created_at":     qdrant.NewValueInt(r.CreatedAt.UnixMilli()), // indexed; ms fit a float64 range bound exactly
		"created_ns":     qdrant.NewValueInt(r.CreatedAt.UnixNano()),
		"dm":             qdrant.NewValueBool(r.Scope == memory.ScopeUser && r.Channel == ""),
		"source_session": qdrant.NewValueString(r.Source.Session),
		"source_skill":   qdrant.NewValueString(r.Source.Skill),
		"source_file":    qdrant.NewValueString(r.Source.File),
		"source_line":    qdrant.NewValueInt(int64(r.Source.Line)),
		"source_link":    qdrant.NewValueString(r.Source.Link),
	}
}

func record(id *qdrant.PointId, p map[string]*qdrant.Value) memory.Record {
	str := func(k string) string { return p[k].GetStringValue() }
	r := memory.Record{
		ID: id.GetUuid(), Tenant: str("tenant"), User: str("user"), Channel: str("channel"), Scope: str("scope"),
		Type: str("type"), Priority: int(p["priority"].GetIntegerValue()), Content: str("content"),
		Source: memory.Source{Session: str("source_session"), Skill: str("source_skill"), File: str("source_file"),
			Line: int(p["source_line"].GetIntegerValue()), Link: str("source_link")},
	}
	if n := p["created_ns"].GetIntegerValue(); n != 0 {
		r.CreatedAt = time.Unix(0, n).UTC()
	} else if ms := p["created_at"].GetIntegerValue(); ms != 0 {
		r.CreatedAt = time.UnixMilli(ms).UTC()
	}
	for _, v := range p["fingerprints"].GetListValue().GetValues() {
		r.Fingerprints = append(r.Fingerprints, v.GetStringValue())
	}
	return r
}

// scopeFilter builds the isolation rule of memory.Scope.Allows as a Qdrant
// filter: tenant must match; then the user's memories (not the DM ones
// when in a channel) or the channel's.
func scopeFilter(sc memory.Scope) (*qdrant.Filter, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	var should []*qdrant.Condition
	if sc.User != "" {
		f := &qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewMatchKeyword("scope", memory.ScopeUser),
			qdrant.NewMatchKeyword("user", sc.User),
		}}
		if sc.Channel != "" {
			f.MustNot = []*qdrant.Condition{qdrant.NewMatchBool("dm", true)}
		}
		should = append(should, qdrant.NewFilterAsCondition(f))
	}
	if sc.Channel != "" {
		should = append(should, qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewMatchKeyword("scope", memory.ScopeChannel),
			qdrant.NewMatchKeyword("channel", sc.Channel),
		}}))
	}
	return &qdrant.Filter{
		Must:   []*qdrant.Condition{qdrant.NewMatchKeyword("tenant", sc.Tenant)},
		Should: should,
	}, nil
}

func f64(v float64) *float64 { return &v }

// msCeil rounds a bound up to the next millisecond, so "created before t"
// at millisecond resolution keeps every record before t; the exact check
// is done on the records read back.
func msCeil(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

func filterFor(f memory.Filter) (*qdrant.Filter, error) {
	qf, err := scopeFilter(f.Scope)
	if err != nil {
		return nil, err
	}
	if len(f.IDs) > 0 {
		ids := make([]*qdrant.PointId, len(f.IDs))
		for i, id := range f.IDs {
			ids[i] = qdrant.NewID(id)
		}
		qf.Must = append(qf.Must, qdrant.NewHasID(ids...))
	}
	if len(f.Types) > 0 {
		qf.Must = append(qf.Must, qdrant.NewMatchKeywords("type", f.Types...))
	}
	if f.MaxPriority != nil {
		qf.Must = append(qf.Must, qdrant.NewRange("priority", &qdrant.Range{Lte: f64(float64(*f.MaxPriority))}))
	}
	if !f.CreatedBefore.IsZero() {
		qf.Must = append(qf.Must, qdrant.NewRange("created_at", &qdrant.Range{Lt: f64(float64(msCeil(f.CreatedBefore)))}))
	}
	if !f.CreatedAfter.IsZero() {
		qf.Must = append(qf.Must, qdrant.NewRange("created_at", &qdrant.Range{Gt: f64(float64(f.CreatedAfter.UnixMilli()))}))
	}
	if f.Fingerprint != "" {
		qf.Must = append(qf.Must, qdrant.NewMatchKeyword("fingerprints", f.Fingerprint))
	}
	return qf, nil
}

// Search returns the top hits visible in q.Scope above the threshold,
// ordered by score, then priority.
func (s *Store) Search(ctx context.Context, q memory.Query) ([]memory.Hit, error) {
	qf, err := scopeFilter(q.Scope)
	if err != nil {
		return nil, err
	}
	if len(q.Types) > 0 {
		qf.Must = append(qf.Must, qdrant.NewMatchKeywords("type", q.Types...))
	}
	if q.MinPriority > 0 {
		qf.Must = append(qf.Must, qdrant.NewRange("priority", &qdrant.Range{Gte: f64(float64(q.MinPriority))}))
	}
	if q.Fingerprint != "" {
		qf.Must = append(qf.Must, qdrant.NewMatchKeyword("fingerprints", q.Fingerprint))
	}
	vec := q.Vector
	if vec == nil {
		if strings.TrimSpace(q.Text) == "" {
			return nil, fmt.Errorf("%w: a query needs text or a vector", memory.ErrInvalid)
		}
		vs, err := s.emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		vec = vs[0]
	}
	if len(vec) != s.dim {
		return nil, fmt.Errorf("%w: query has %d dimensions, the store %d", memory.ErrDimension, len(vec), s.dim)
	}
	minScore := q.MinScore
	if minScore <= 0 {
		minScore = s.emb.MinScore()
	}
	limit := q.EffectiveLimit()
	c, cancel, err := s.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	// Fetch a few more than needed so that equal scores are ordered by
	// priority across the cut.
	resp, err := s.points.Search(c, &qdrant.SearchPoints{
		CollectionName: s.coll, Vector: vec, Filter: qf, Limit: uint64(2 * limit),
		ScoreThreshold: &minScore, WithPayload: qdrant.NewWithPayload(true),
	})
	if err != nil {
		return nil, wrap("search", err)
	}
	hits := make([]memory.Hit, 0, len(resp.GetResult()))
	for _, p := range resp.GetResult() {
		r := record(p.GetId(), p.GetPayload())
		if !q.Scope.Allows(r) { // belt and braces: never widen a scope
			continue
		}
		hits = append(hits, memory.Hit{Record: r, Score: p.GetScore()})
	}
	memory.SortHits(hits)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// scroll returns every point matching qf.
func (s *Store) scroll(ctx context.Context, qf *qdrant.Filter) ([]memory.Record, error) {
	c, cancel, err := s.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var out []memory.Record
	var offset *qdrant.PointId
	lim := uint32(scrollPage)
	for {
		pts, next, err := s.client.ScrollAndOffset(c, &qdrant.ScrollPoints{
			CollectionName: s.coll, Filter: qf, Limit: &lim, Offset: offset, WithPayload: qdrant.NewWithPayload(true),
		})
		if err != nil {
			return nil, wrap("scroll", err)
		}
		for _, p := range pts {
			out = append(out, record(p.GetId(), p.GetPayload()))
		}
		if next == nil || len(pts) == 0 {
			return out, nil
		}
		offset = next
	}
}

// List returns visible records matching f, newest first; limit <= 0
// means all.
func (s *Store) List(ctx context.Context, f memory.Filter, limit int) ([]memory.Record, error) {
	qf, err := filterFor(f)
	if err != nil {
		return nil, err
	}
	recs, err := s.scroll(ctx, qf)
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, r := range recs {
		if f.Scope.Allows(r) && f.Match(r) {
			out = append(out, r)
		}
	}
	sortNewest(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func sortNewest(out []memory.Record) {
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && newer(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
}

func newer(a, b memory.Record) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID < b.ID
}

// Delete removes the visible records matching f and returns how many: it
// scrolls the ids the filter selects, then deletes by that filter
// narrowed to those ids, so the count is exact.
func (s *Store) Delete(ctx context.Context, f memory.Filter) (int, error) {
	qf, err := filterFor(f)
	if err != nil {
		return 0, err
	}
	return s.deleteMatching(ctx, qf, func(r memory.Record) bool { return f.Scope.Allows(r) && f.Match(r) })
}

// deleteMatching deletes the points qf selects that also pass the exact
// check ok, and returns how many.
func (s *Store) deleteMatching(ctx context.Context, qf *qdrant.Filter, ok func(memory.Record) bool) (int, error) {
	recs, err := s.scroll(ctx, qf)
	if err != nil {
		return 0, err
	}
	var ids []*qdrant.PointId
	for _, r := range recs {
		if ok(r) {
			ids = append(ids, qdrant.NewID(r.ID))
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	sel := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(qf), qdrant.NewHasID(ids...)}}
	c, cancel, err := s.call(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	wait := true
	if _, err := s.client.Delete(c, &qdrant.DeletePoints{CollectionName: s.coll, Wait: &wait, Points: qdrant.NewPointsSelectorFilter(sel)}); err != nil {
		return 0, wrap("delete", err)
	}
	return len(ids), nil
}

// Cleanup removes, across tenants, records with priority <= maxPriority
// older than olderThan, and records older than their type's TTL.
func (s *Store) Cleanup(ctx context.Context, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) (int, error) {
	var should []*qdrant.Condition
	if olderThan > 0 {
		should = append(should, qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewRange("priority", &qdrant.Range{Lte: f64(float64(maxPriority))}),
			qdrant.NewRange("created_at", &qdrant.Range{Lt: f64(float64(msCeil(now.Add(-olderThan))))}),
		}}))
	}
	for typ, d := range ttl {
		if d <= 0 {
			continue
		}
		should = append(should, qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{
			qdrant.NewMatchKeyword("type", typ),
			qdrant.NewRange("created_at", &qdrant.Range{Lt: f64(float64(msCeil(now.Add(-d))))}),
		}}))
	}
	if len(should) == 0 {
		return 0, nil
	}
	return s.deleteMatching(ctx, &qdrant.Filter{Should: should}, func(r memory.Record) bool {
		return memory.Expired(r, now, maxPriority, olderThan, ttl)
	})
}

// Ping checks that Qdrant answers and the collection is usable.
func (s *Store) Ping(ctx context.Context) error {
	c, cancel := context.WithTimeout(ctx, s.tmo)
	defer cancel()
	if _, err := s.client.HealthCheck(c); err != nil {
		return wrap("health", err)
	}
	return s.ensure(ctx)
}

// Close closes the connection.
func (s *Store) Close() error { return s.client.Close() }
