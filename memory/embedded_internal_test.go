package memory

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestParallelScanMatchesBruteForce checks the chunked, multi-worker scan
// of large scopes against a plain scan of every visible record.
func TestParallelScanMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("large scan")
	}
	ctx := context.Background()
	db, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	emb, _ := NewHashEmbedder(32)
	s, err := NewEmbedded(ctx, EmbeddedConfig{DB: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	scope := Scope{Tenant: "T", User: "U", Channel: "C"}
	var all []Record
	for i := 0; i < parallelScanRows+5000; i++ {
		v := make([]float32, 32)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		Normalize(v)
		r := Record{ID: NewID(), Tenant: "T", User: "U", Channel: "C", Scope: ScopeChannel, Type: TypeFact, Priority: i % 6, Content: "m", Vector: v}
		switch i % 7 {
		case 0:
			r.Scope = ScopeUser
		case 1:
			r.Scope, r.Channel = ScopeUser, "" // DM memory: not visible in C
		case 2:
			r.Channel = "OTHER"
		}
		all = append(all, r)
	}
	if err := s.Add(ctx, all...); err != nil {
		t.Fatal(err)
	}
	q := all[10].Vector
	got, err := s.Search(ctx, Query{Scope: scope, Vector: q, Limit: 20, MinScore: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var want []Hit
	for _, r := range all {
		if !scope.Allows(r) {
			continue
		}
		if sc := dot(q, r.Vector); sc >= 0.2 {
			want = append(want, Hit{Record: r, Score: sc})
		}
	}
	SortHits(want)
	want = want[:20]
	if len(got) != 20 {
		t.Fatalf("got %d hits", len(got))
	}
	for i := range want {
		if got[i].ID != want[i].ID {
			t.Fatalf("hit %d: got %s (%.4f), want %s (%.4f)", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
	if !slices.IsSortedFunc(got, func(a, b Hit) int {
		if a.Score > b.Score {
			return -1
		}
		if a.Score < b.Score {
			return 1
		}
		return 0
	}) {
		t.Fatal("hits not sorted by score")
	}
}
