package memory_test

import (
	"context"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/memory/memorytest"
)

func newEmbedded(t *testing.T) memory.LongTerm {
	t.Helper()
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb, _ := memory.NewHashEmbedder(0)
	s, err := memory.NewEmbedded(context.Background(), memory.EmbeddedConfig{DB: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEmbeddedSuite(t *testing.T) { memorytest.Run(t, newEmbedded) }
