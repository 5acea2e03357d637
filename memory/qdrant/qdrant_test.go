package qdrant_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/memory/memorytest"
	"github.com/sleuth-bot/sleuth/memory/qdrant"
	"github.com/sleuth-bot/sleuth/memory/qdranttest"
)

func startServer(t *testing.T) *qdranttest.Server {
	t.Helper()
	srv, err := qdranttest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

func newStore(t *testing.T, srv *qdranttest.Server, collection string, dim int) *qdrant.Store {
	t.Helper()
	emb, _ := memory.NewHashEmbedder(dim)
	s, err := qdrant.New(qdrant.Config{URL: srv.URL(), Collection: collection, Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestQdrantSuite(t *testing.T) {
	srv := startServer(t)
	n := 0
	memorytest.Run(t, func(t *testing.T) memory.LongTerm {
		n++
		return newStore(t, srv, "suite"+strings.Repeat("x", n), 0)
	})
}

func TestCollectionCreatedWithIndexes(t *testing.T) {
	srv := startServer(t)
	s := newStore(t, srv, "mem", 64)
	defer s.Close()
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix := srv.Indexes("mem")
	for _, f := range []string{"tenant", "user", "channel", "scope", "type", "priority", "created_at"} {
		if _, ok := ix[f]; !ok {
			t.Errorf("no payload index on %s (have %v)", f, ix)
		}
	}
	if ix["priority"] != qc.FieldType_FieldTypeInteger || ix["tenant"] != qc.FieldType_FieldTypeKeyword {
		t.Errorf("index types: %v", ix)
	}
}

func TestDimensionMismatch(t *testing.T) {
	srv := startServer(t)
	srv.CreateCollection("mem", 128)
	s := newStore(t, srv, "mem", 64)
	defer s.Close()
	err := s.Add(context.Background(), memory.Record{Tenant: "T", User: "U", Scope: memory.ScopeUser, Type: memory.TypeFact, Priority: 1, Content: "x"})
	if !errors.Is(err, memory.ErrDimension) {
		t.Fatalf("Add = %v; want ErrDimension", err)
	}
	if !strings.Contains(err.Error(), "EMBED_MODEL") || !strings.Contains(err.Error(), "QDRANT_COLLECTION") {
		t.Fatalf("error does not name the fix: %v", err)
	}
	if srv.Count("mem") != 0 {
		t.Fatal("points written despite mismatch")
	}
}

func TestServerDownIsUnavailable(t *testing.T) {
	srv := startServer(t)
	s := newStore(t, srv, "mem", 64)
	defer s.Close()
	srv.Stop()
	_, err := s.Search(context.Background(), memory.Query{Scope: memory.Scope{Tenant: "T", User: "U"}, Text: "x"})
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Search with server down = %v; want ErrUnavailable", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The client reconnects within its backoff (seconds).
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Ping(context.Background())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Ping after restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestParseURL(t *testing.T) {
	emb, _ := memory.NewHashEmbedder(0)
	for _, u := range []string{"http://localhost:6334", "https://q.example.com", "localhost:6333", "q:443"} {
		if _, err := qdrant.New(qdrant.Config{URL: u, Embedder: emb}); err != nil {
			t.Errorf("New(%q) = %v", u, err)
		}
	}
	if _, err := qdrant.New(qdrant.Config{URL: "", Embedder: emb}); err == nil {
		t.Error("empty URL accepted")
	}
	if _, err := qdrant.New(qdrant.Config{URL: "http://x:notaport", Embedder: emb}); err == nil {
		t.Error("bad port accepted")
	}
}
