package qdrant_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/memory/memorytest"
)

func openDB(t *testing.T, dir string) *memory.DB {
	t.Helper()
	db, err := memory.Open(context.Background(), memory.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func memErrors(op string) float64 {
	var m dto.Metric
	metrics.MemoryErrors.WithLabelValues(op).Write(&m)
	return m.GetCounter().GetValue()
}

func TestResilientSuite(t *testing.T) {
	srv := startServer(t)
	db := openDB(t, t.TempDir())
	defer db.Close()
	n := 0
	memorytest.Run(t, func(t *testing.T) memory.LongTerm {
		n++
		r, err := memory.NewResilient(memory.ResilientConfig{Primary: newStore(t, srv, "res"+string(rune('a'+n)), 0), DB: db, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestResilientQueuesWhileDownAndReplays(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	dir := t.TempDir()
	db := openDB(t, dir)
	fast := memory.ResilientConfig{DB: db, CallTimeout: 500 * time.Millisecond, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	cfg := fast
	cfg.Primary = newStore(t, srv, "mem", 0)
	r, err := memory.NewResilient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scope := memory.Scope{Tenant: "T", User: "alice", Channel: "C"}
	add := func(r *memory.Resilient, content string) {
		t.Helper()
		if err := r.Add(ctx, memory.Record{Tenant: "T", Channel: "C", Scope: memory.ScopeChannel, Type: memory.TypeIncident, Priority: 3, Content: content}); err != nil {
			t.Fatalf("Add(%q) = %v; an outage must not refuse a write", content, err)
		}
	}
	add(r, "first: kafka consumer lag after broker restart")
	if srv.Count("mem") != 1 {
		t.Fatalf("healthy write not applied: %d points", srv.Count("mem"))
	}

	// Down mid-run: writes are acknowledged and queued, reads fail fast.
	srv.Stop()
	before := memErrors("search")
	add(r, "second: kafka consumer lag during the outage")
	start := time.Now()
	_, err = r.Search(ctx, memory.Query{Scope: scope, Text: "kafka consumer lag"})
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Search while down = %v; want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Search while down took %v", d)
	}
	if memErrors("search") <= before {
		t.Fatal("metrics.MemoryErrors not incremented")
	}
	if r.Healthy() {
		t.Fatal("still healthy while down")
	}
	if n, _ := r.Pending(ctx); n != 1 {
		t.Fatalf("pending = %d; want 1", n)
	}
	if _, err := r.Delete(ctx, memory.Filter{Scope: scope}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Delete while down = %v", err)
	}

	// Restart of sleuth while Qdrant is still down: the outbox survives.
	add(r, "third: kafka consumer lag queued before restart")
	r.Close()
	db.Close()
	db = openDB(t, dir)
	defer db.Close()
	cfg = fast
	cfg.DB = db
	cfg.Primary = newStore(t, srv, "mem", 0)
	r, err = memory.NewResilient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, _ := r.Pending(ctx); n != 2 {
		t.Fatalf("pending after restart = %d; want 2", n)
	}

	// Qdrant is back: the outbox is replayed in order, reads work again.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "outbox replay", func() bool { n, _ := r.Pending(ctx); return n == 0 && r.Healthy() })
	hits, err := r.Search(ctx, memory.Query{Scope: scope, Text: "kafka consumer lag", MinScore: 0.05})
	if err != nil || len(hits) != 3 {
		t.Fatalf("after replay: %d hits, %v", len(hits), err)
	}
}

func TestResilientDownAtStartAndSlow(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	srv.Stop()
	db := openDB(t, t.TempDir())
	defer db.Close()
	r, err := memory.NewResilient(memory.ResilientConfig{Primary: newStore(t, srv, "mem", 0), DB: db,
		CallTimeout: 300 * time.Millisecond, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("NewResilient with Qdrant down = %v", err)
	}
	defer r.Close()
	waitFor(t, "down detected", func() bool { return !r.Healthy() })
	if err := r.Add(ctx, memory.Record{Tenant: "T", User: "U", Scope: memory.ScopeUser, Type: memory.TypeFact, Priority: 2, Content: "queued at start"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replay after start", func() bool { return srv.Count("mem") == 1 && r.Healthy() })

	// Slow: a call past CallTimeout fails fast and marks the store down.
	srv.SetDelay(2 * time.Second)
	start := time.Now()
	_, err = r.Search(ctx, memory.Query{Scope: memory.Scope{Tenant: "T", User: "U"}, Text: "queued"})
	if !errors.Is(err, memory.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("slow Search = %v after %v", err, time.Since(start))
	}
	srv.SetDelay(0)
	waitFor(t, "recovery after slowness", func() bool { return r.Healthy() })
}
