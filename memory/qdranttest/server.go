// Package qdranttest is an in-process Qdrant for tests: a real gRPC server
// on a loopback port implementing the parts of Qdrant's Collections,
// Points and Qdrant services that sleuth calls, with Qdrant's filter
// semantics (must / should / must_not, min_should, nested filters, keyword
// and integer and bool match, match any / except, range, has_id, is_empty,
// is_null), cosine scoring with vectors normalised on upsert, score
// thresholds, and scroll paging ordered by id. It can be stopped and
// restarted on the same address, and slowed down, to test faults.
package qdranttest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is a fake Qdrant. Data survives Stop/Start (like a server with a
// disk). Safe for concurrent use.
type Server struct {
	mu          sync.Mutex
	collections map[string]*collection
	addr        string
	gs          *grpc.Server
	lis         net.Listener
	delay       time.Duration
	calls       map[string]int

	done chan struct{}
}

type collection struct {
	dim      int
	metadata map[string]*qdrant.Value
	indexes  map[string]qdrant.FieldType
	points   map[string]*point
}

type point struct {
	id      *qdrant.PointId
	vec     []float32
	payload map[string]*qdrant.Value
}

// Start starts a server on 127.0.0.1 with a free port. Stop it when done
// (tests: t.Cleanup(s.Stop)).
func Start() (*Server, error) {
	s := &Server{collections: map[string]*collection{}, calls: map[string]int{}}
	if err := s.listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) listen(addr string) error {
	var lis net.Listener
	var err error
	// The port may linger briefly after a stop.
	for i := 0; i < 50; i++ {
		lis, err = net.Listen("tcp", addr)
		if err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("qdranttest: listen: %w", err)
	}
	gs := grpc.NewServer()
	qdrant.RegisterQdrantServer(gs, &health{s: s})
	qdrant.RegisterCollectionsServer(gs, &collectionsSrv{s: s})
	qdrant.RegisterPointsServer(gs, &pointsSrv{s: s})
	done := make(chan struct{})
	s.mu.Lock()
	s.addr, s.gs, s.lis, s.done = lis.Addr().String(), gs, lis, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	return nil
}

// Addr is host:port of the gRPC endpoint.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL is the address as a QDRANT_URL ("http://127.0.0.1:port").
func (s *Server) URL() string { return "http://" + s.Addr() }

// Stop stops serving; connections fail until Start is called again.
// Data is kept.
func (s *Server) Stop() {
	s.mu.Lock()
	gs, done := s.gs, s.done
	s.gs = nil
	s.mu.Unlock()
	if gs != nil {
		gs.Stop()
		<-done
	}
}

// Restart serves again on the same address.
func (s *Server) Restart() error {
	s.Stop()
	return s.listen(s.Addr())
}

// SetDelay makes every call wait d first (a slow server).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// Calls returns how many times a method (e.g. "Upsert") was called.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Count returns the number of points in a collection.
func (s *Server) Count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.collections[name]; c != nil {
		return len(c.points)
	}
	return 0
}

// Indexes returns the payload fields indexed in a collection.
func (s *Server) Indexes(name string) map[string]qdrant.FieldType {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]qdrant.FieldType{}
	if c := s.collections[name]; c != nil {
		for k, v := range c.indexes {
			out[k] = v
		}
	}
	return out
}

// CreateCollection creates a collection directly (to set up mismatches).
func (s *Server) CreateCollection(name string, dim int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.collections[name] = &collection{dim: dim, indexes: map[string]qdrant.FieldType{}, points: map[string]*point{}}
}

// enter counts a call, applies the delay and locks the server; the
// caller unlocks.
func (s *Server) enter(ctx context.Context, method string) error {
	s.mu.Lock()
	s.calls[method]++
	d := s.delay
	s.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	s.mu.Lock()
	return nil
}

func (s *Server) coll(name string) (*collection, error) {
	c := s.collections[name]
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "Collection `%s` doesn't exist!", name)
	}
	return c, nil
}

type health struct {
	qdrant.UnimplementedQdrantServer
	s *Server
}

func (h *health) HealthCheck(ctx context.Context, _ *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	if err := h.s.enter(ctx, "HealthCheck"); err != nil {
		return nil, err
	}
	defer h.s.mu.Unlock()
	return &qdrant.HealthCheckReply{Title: "qdranttest", Version: "1.17.0"}, nil
}

type collectionsSrv struct {
	qdrant.UnimplementedCollectionsServer
	s *Server
}

func (c *collectionsSrv) CollectionExists(ctx context.Context, r *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	if err := c.s.enter(ctx, "CollectionExists"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	_, ok := c.s.collections[r.GetCollectionName()]
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: ok}}, nil
}

func (c *collectionsSrv) Get(ctx context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	if err := c.s.enter(ctx, "GetCollection"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	col, err := c.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	n := uint64(len(col.points))
	schema := map[string]*qdrant.PayloadSchemaInfo{}
	for k, t := range col.indexes {
		schema[k] = &qdrant.PayloadSchemaInfo{DataType: qdrant.PayloadSchemaType(t + 1)}
	}
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:        qdrant.CollectionStatus_Green,
		PointsCount:   &n,
		PayloadSchema: schema,
		Config: &qdrant.CollectionConfig{
			Params:   &qdrant.CollectionParams{VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(col.dim), Distance: qdrant.Distance_Cosine})},
			Metadata: col.metadata,
		},
	}}, nil
}

func (c *collectionsSrv) List(ctx context.Context, _ *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	if err := c.s.enter(ctx, "ListCollections"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	var out []*qdrant.CollectionDescription
	for name := range c.s.collections {
		out = append(out, &qdrant.CollectionDescription{Name: name})
	}
	return &qdrant.ListCollectionsResponse{Collections: out}, nil
}

func (c *collectionsSrv) Create(ctx context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	if err := c.s.enter(ctx, "CreateCollection"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	if _, ok := c.s.collections[r.GetCollectionName()]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Collection `%s` already exists!", r.GetCollectionName())
	}
	p := r.GetVectorsConfig().GetParams()
	if p == nil || p.GetSize() == 0 {
		return nil, status.Error(codes.InvalidArgument, "vectors config with a size is required")
	}
	if p.GetDistance() != qdrant.Distance_Cosine {
		return nil, status.Error(codes.Unimplemented, "qdranttest implements cosine distance only")
	}
	c.s.collections[r.GetCollectionName()] = &collection{dim: int(p.GetSize()), metadata: r.GetMetadata(), indexes: map[string]qdrant.FieldType{}, points: map[string]*point{}}
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (c *collectionsSrv) Delete(ctx context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	if err := c.s.enter(ctx, "DeleteCollection"); err != nil {
		return nil, err
	}
	defer c.s.mu.Unlock()
	_, ok := c.s.collections[r.GetCollectionName()]
	delete(c.s.collections, r.GetCollectionName())
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

type pointsSrv struct {
	qdrant.UnimplementedPointsServer
	s *Server
}

func ok() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

func idKey(id *qdrant.PointId) string {
	if u, isU := id.GetPointIdOptions().(*qdrant.PointId_Uuid); isU {
		return "u:" + u.Uuid
	}
	return fmt.Sprintf("n:%020d", id.GetNum())
}

func (p *pointsSrv) CreateFieldIndex(ctx context.Context, r *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	if err := p.s.enter(ctx, "CreateFieldIndex"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	col.indexes[r.GetFieldName()] = r.GetFieldType()
	return ok(), nil
}

func (p *pointsSrv) Upsert(ctx context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	if err := p.s.enter(ctx, "Upsert"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	staged := make([]*point, 0, len(r.GetPoints()))
	for _, ps := range r.GetPoints() {
		v := ps.GetVectors().GetVector()
		data := v.GetDense().GetData()
		if data == nil {
			data = v.GetData()
		}
		if len(data) != col.dim {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", col.dim, len(data))
		}
		if ps.GetId() == nil {
			return nil, status.Error(codes.InvalidArgument, "point id is required")
		}
		staged = append(staged, &point{id: ps.GetId(), vec: normalized(data), payload: ps.GetPayload()})
	}
	for _, pt := range staged {
		col.points[idKey(pt.id)] = pt
	}
	return ok(), nil
}

func normalized(v []float32) []float32 {
	out := slices.Clone(v)
	var s float64
	for _, x := range out {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i := range out {
		out[i] = float32(float64(out[i]) * inv)
	}
	return out
}

func (p *pointsSrv) Delete(ctx context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	if err := p.s.enter(ctx, "Delete"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	switch sel := r.GetPoints().GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		for _, id := range sel.Points.GetIds() {
			delete(col.points, idKey(id))
		}
	case *qdrant.PointsSelector_Filter:
		for k, pt := range col.points {
			m, err := matchFilter(sel.Filter, pt)
			if err != nil {
				return nil, err
			}
			if m {
				delete(col.points, k)
			}
		}
	default:
		return nil, status.Error(codes.InvalidArgument, "points selector is required")
	}
	return ok(), nil
}

func (p *pointsSrv) Search(ctx context.Context, r *qdrant.SearchPoints) (*qdrant.SearchResponse, error) {
	if err := p.s.enter(ctx, "Search"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if len(r.GetVector()) != col.dim {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", col.dim, len(r.GetVector()))
	}
	q := normalized(r.GetVector())
	var out []*qdrant.ScoredPoint
	for _, pt := range col.points {
		m, err := matchFilter(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if !m {
			continue
		}
		var score float32
		for i := range q {
			score += q[i] * pt.vec[i]
		}
		if r.ScoreThreshold != nil && score < r.GetScoreThreshold() {
			continue
		}
		sp := &qdrant.ScoredPoint{Id: pt.id, Score: score}
		if r.GetWithPayload().GetEnable() {
			sp.Payload = pt.payload
		}
		out = append(out, sp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return idKey(out[i].Id) < idKey(out[j].Id)
	})
	off := int(r.GetOffset())
	if off > len(out) {
		off = len(out)
	}
	out = out[off:]
	if lim := int(r.GetLimit()); len(out) > lim {
		out = out[:lim]
	}
	return &qdrant.SearchResponse{Result: out}, nil
}

func (p *pointsSrv) Scroll(ctx context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	if err := p.s.enter(ctx, "Scroll"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if r.OrderBy != nil {
		return nil, status.Error(codes.Unimplemented, "qdranttest: scroll order_by is not implemented")
	}
	keys := make([]string, 0, len(col.points))
	for k := range col.points {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	limit := 10
	if r.Limit != nil {
		limit = int(r.GetLimit())
	}
	start := ""
	if r.Offset != nil {
		start = idKey(r.GetOffset())
	}
	resp := &qdrant.ScrollResponse{}
	for _, k := range keys {
		if k < start {
			continue
		}
		pt := col.points[k]
		m, err := matchFilter(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if !m {
			continue
		}
		if len(resp.Result) == limit {
			resp.NextPageOffset = pt.id
			break
		}
		rp := &qdrant.RetrievedPoint{Id: pt.id}
		if r.GetWithPayload().GetEnable() {
			rp.Payload = pt.payload
		}
		if r.GetWithVectors().GetEnable() {
			rp.Vectors = &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: &qdrant.VectorOutput{
				Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: pt.vec}}}}}
		}
		resp.Result = append(resp.Result, rp)
	}
	return resp, nil
}

func (p *pointsSrv) Count(ctx context.Context, r *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	if err := p.s.enter(ctx, "Count"); err != nil {
		return nil, err
	}
	defer p.s.mu.Unlock()
	col, err := p.s.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var n uint64
	for _, pt := range col.points {
		m, err := matchFilter(r.GetFilter(), pt)
		if err != nil {
			return nil, err
		}
		if m {
			n++
		}
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: n}}, nil
}

var errUnsupported = errors.New("unsupported condition")

// matchFilter applies Qdrant's rules: every must condition holds, no
// must_not condition holds, and at least one should condition (or
// min_should.min_count of them) holds when any are given. A nil filter
// matches everything.
func matchFilter(f *qdrant.Filter, pt *point) (bool, error) {
	if f == nil {
		return true, nil
	}
	for _, c := range f.GetMust() {
		m, err := matchCond(c, pt)
		if err != nil || !m {
			return false, err
		}
	}
	for _, c := range f.GetMustNot() {
		m, err := matchCond(c, pt)
		if err != nil || m {
			return false, err
		}
	}
	if len(f.GetShould()) > 0 {
		n := 0
		for _, c := range f.GetShould() {
			m, err := matchCond(c, pt)
			if err != nil {
				return false, err
			}
			if m {
				n++
			}
		}
		if n == 0 {
			return false, nil
		}
	}
	if ms := f.GetMinShould(); ms != nil {
		n := 0
		for _, c := range ms.GetConditions() {
			m, err := matchCond(c, pt)
			if err != nil {
				return false, err
			}
			if m {
				n++
			}
		}
		if uint64(n) < ms.GetMinCount() {
			return false, nil
		}
	}
	return true, nil
}

func matchCond(c *qdrant.Condition, pt *point) (bool, error) {
	switch cc := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return matchFilter(cc.Filter, pt)
	case *qdrant.Condition_HasId:
		k := idKey(pt.id)
		for _, id := range cc.HasId.GetHasId() {
			if idKey(id) == k {
				return true, nil
			}
		}
		return false, nil
	case *qdrant.Condition_IsEmpty:
		return len(values(pt.payload[cc.IsEmpty.GetKey()])) == 0, nil
	case *qdrant.Condition_IsNull:
		v, ok := pt.payload[cc.IsNull.GetKey()]
		if !ok {
			return false, nil
		}
		_, null := v.GetKind().(*qdrant.Value_NullValue)
		return null, nil
	case *qdrant.Condition_Field:
		return matchField(cc.Field, pt.payload)
	}
	return false, status.Errorf(codes.Unimplemented, "qdranttest: %v: %T", errUnsupported, c.GetConditionOneOf())
}

// values flattens a payload value: a list gives its elements (Qdrant
// matches a condition on an array when any element matches).
func values(v *qdrant.Value) []*qdrant.Value {
	if v == nil {
		return nil
	}
	if l, ok := v.GetKind().(*qdrant.Value_ListValue); ok {
		return l.ListValue.GetValues()
	}
	if _, null := v.GetKind().(*qdrant.Value_NullValue); null {
		return nil
	}
	return []*qdrant.Value{v}
}

func matchField(fc *qdrant.FieldCondition, payload map[string]*qdrant.Value) (bool, error) {
	vals := values(payload[fc.GetKey()])
	if fc.IsEmpty != nil {
		return (len(vals) == 0) == fc.GetIsEmpty(), nil
	}
	if m := fc.GetMatch(); m != nil {
		switch mv := m.GetMatchValue().(type) {
		case *qdrant.Match_Keyword:
			return anyVal(vals, func(v *qdrant.Value) bool { return isStr(v, mv.Keyword) }), nil
		case *qdrant.Match_Integer:
			return anyVal(vals, func(v *qdrant.Value) bool { return isInt(v, mv.Integer) }), nil
		case *qdrant.Match_Boolean:
			return anyVal(vals, func(v *qdrant.Value) bool {
				b, ok := v.GetKind().(*qdrant.Value_BoolValue)
				return ok && b.BoolValue == mv.Boolean
			}), nil
		case *qdrant.Match_Keywords:
			return anyVal(vals, func(v *qdrant.Value) bool {
				return slices.ContainsFunc(mv.Keywords.GetStrings(), func(s string) bool { return isStr(v, s) })
			}), nil
		case *qdrant.Match_Integers:
			return anyVal(vals, func(v *qdrant.Value) bool {
				return slices.ContainsFunc(mv.Integers.GetIntegers(), func(n int64) bool { return isInt(v, n) })
			}), nil
		case *qdrant.Match_ExceptKeywords:
			// Qdrant: matches when the value is none of them (and a
			// missing field matches).
			return !anyVal(vals, func(v *qdrant.Value) bool {
				return slices.ContainsFunc(mv.ExceptKeywords.GetStrings(), func(s string) bool { return isStr(v, s) })
			}), nil
		case *qdrant.Match_ExceptIntegers:
			return !anyVal(vals, func(v *qdrant.Value) bool {
				return slices.ContainsFunc(mv.ExceptIntegers.GetIntegers(), func(n int64) bool { return isInt(v, n) })
			}), nil
		}
		return false, status.Errorf(codes.Unimplemented, "qdranttest: match %T is not implemented", m.GetMatchValue())
	}
	if r := fc.GetRange(); r != nil {
		return anyVal(vals, func(v *qdrant.Value) bool {
			var x float64
			switch k := v.GetKind().(type) {
			case *qdrant.Value_IntegerValue:
				x = float64(k.IntegerValue)
			case *qdrant.Value_DoubleValue:
				x = k.DoubleValue
			default:
				return false
			}
			return (r.Lt == nil || x < r.GetLt()) && (r.Lte == nil || x <= r.GetLte()) &&
				(r.Gt == nil || x > r.GetGt()) && (r.Gte == nil || x >= r.GetGte())
		}), nil
	}
	return false, status.Errorf(codes.Unimplemented, "qdranttest: field condition on %q is not implemented", fc.GetKey())
}

func anyVal(vals []*qdrant.Value, f func(*qdrant.Value) bool) bool {
	return slices.ContainsFunc(vals, f)
}

func isStr(v *qdrant.Value, s string) bool {
	k, ok := v.GetKind().(*qdrant.Value_StringValue)
	return ok && k.StringValue == s
}

func isInt(v *qdrant.Value, n int64) bool {
	k, ok := v.GetKind().(*qdrant.Value_IntegerValue)
	return ok && k.IntegerValue == n
}
