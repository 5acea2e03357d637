package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
)

// BenchmarkEmbeddedSearch100k measures a search over 100,000 memories of
// one tenant, all visible to the searching scope (80k channel memories of
// the channel, 20k user memories of the user): the worst case, every row
// scanned. It reports the p99 latency of a search in ms.
//
//	go test ./memory -run '^$' -bench EmbeddedSearch100k -benchtime 200x
func BenchmarkEmbeddedSearch100k(b *testing.B) {
	ctx := context.Background()
	db, err := memory.Open(ctx, memory.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	emb, _ := memory.NewHashEmbedder(0)
	s, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	dim := emb.Dimension()
	rng := rand.New(rand.NewPCG(1, 2))
	scope := memory.Scope{Tenant: "T", User: "U", Channel: "C"}
	batch := make([]memory.Record, 0, 1000)
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		memory.Normalize(v)
		r := memory.Record{Tenant: "T", User: "U", Channel: "C", Scope: memory.ScopeChannel, Type: memory.TypeFact,
			Priority: i % 6, Content: fmt.Sprintf("memory %d", i), Vector: v}
		if i%5 == 0 {
			r.Scope = memory.ScopeUser
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			if err := s.Add(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	q, _ := emb.Embed(ctx, []string{"postgres connection pool exhausted"})
	// Warm the tenant cache (loaded lazily on first use).
	if _, err := s.Search(ctx, memory.Query{Scope: scope, Vector: q[0]}); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Search(ctx, memory.Query{Scope: scope, Vector: q[0], MinScore: 0.01}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
