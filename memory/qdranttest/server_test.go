package qdranttest

import (
	"context"
	"sort"
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

func TestFilterSemantics(t *testing.T) {
	srv, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := qdrant.NewClient(&qdrant.Config{Host: "127.0.0.1", Port: port(t, srv), SkipCompatibilityCheck: true, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c",
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
	pts := []*qdrant.PointStruct{
		{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"color": "red", "n": 1, "tags": []any{"a", "b"}, "ok": true})},
		{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(0, 3), Payload: qdrant.NewValueMap(map[string]any{"color": "blue", "n": 5, "tags": []any{"b"}, "ok": false})},
		{Id: qdrant.NewIDNum(3), Vectors: qdrant.NewVectors(1, 1), Payload: qdrant.NewValueMap(map[string]any{"color": "green", "n": 9})},
	}
	if _, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "c", Points: pts}); err != nil {
		t.Fatal(err)
	}
	f64 := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		f    *qdrant.Filter
		want []uint64
	}{
		{"nil", nil, []uint64{1, 2, 3}},
		{"must keyword", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("color", "red")}}, []uint64{1}},
		{"keyword in array", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tags", "b")}}, []uint64{1, 2}},
		{"must_not", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatch("color", "red")}}, []uint64{2, 3}},
		{"should any", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatch("color", "red"), qdrant.NewMatch("color", "green")}}, []uint64{1, 3}},
		{"range", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("n", &qdrant.Range{Gt: f64(1), Lte: f64(9)})}}, []uint64{2, 3}},
		{"has_id", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(2), qdrant.NewIDNum(3))}}, []uint64{2, 3}},
		{"bool", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("ok", true)}}, []uint64{1}},
		{"any of keywords", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("color", "blue", "green")}}, []uint64{2, 3}},
		{"except keywords", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchExcept("color", "blue", "green")}}, []uint64{1}},
		{"nested", &qdrant.Filter{
			Must: []*qdrant.Condition{qdrant.NewRange("n", &qdrant.Range{Gte: f64(1)})},
			Should: []*qdrant.Condition{
				qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("color", "blue")}, MustNot: []*qdrant.Condition{qdrant.NewMatchBool("ok", true)}}),
				qdrant.NewFilterAsCondition(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("color", "red"), qdrant.NewMatchBool("ok", false)}}),
			}}, []uint64{2}},
	}
	for _, tt := range tests {
		got, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "c", Filter: tt.f})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var ids []uint64
		for _, p := range got {
			ids = append(ids, p.GetId().GetNum())
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		if len(ids) != len(tt.want) {
			t.Errorf("%s: got %v want %v", tt.name, ids, tt.want)
			continue
		}
		for i := range ids {
			if ids[i] != tt.want[i] {
				t.Errorf("%s: got %v want %v", tt.name, ids, tt.want)
				break
			}
		}
	}
	// Cosine with normalisation and a score threshold.
	th := float32(0.9)
	res, err := c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "c", Vector: []float32{2, 0}, Limit: 10, ScoreThreshold: &th})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetResult()) != 1 || res.GetResult()[0].GetId().GetNum() != 1 || res.GetResult()[0].GetScore() < 0.999 {
		t.Fatalf("search: %v", res.GetResult())
	}
	// Scroll pages by id.
	lim := uint32(2)
	page, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "c", Limit: &lim})
	if err != nil || len(page) != 2 || next.GetNum() != 3 {
		t.Fatalf("scroll page: %v next %v err %v", page, next, err)
	}
}

func port(t *testing.T, s *Server) int {
	t.Helper()
	a := s.Addr()
	var p int
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] == ':' {
			for _, ch := range a[i+1:] {
				p = p*10 + int(ch-'0')
			}
			break
		}
	}
	return p
}
