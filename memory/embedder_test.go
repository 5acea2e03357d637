package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
)

func cos(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestHashEmbedderThreshold tunes MinScore: paraphrases sharing a few
// content words score above it, unrelated texts below.
func TestHashEmbedderThreshold(t *testing.T) {
	emb, _ := memory.NewHashEmbedder(0)
	th := emb.MinScore()
	pairs := []struct {
		a, b    string
		similar bool
	}{
		{"postgres connection pool exhausted in checkout", "checkout failed: connection pool to postgres exhausted", true},
		{"alice prefers short answers with line numbers", "answers should be short and cite line numbers", true},
		{"kafka consumer lag after broker restart", "consumer lag on kafka grew after the broker restarted", true},
		{"OOMKilled worker in image resizer", "image resizer worker was OOMKilled", true},
		{"postgres connection pool exhausted in checkout", "kubernetes ingress certificate renewal", false},
		{"alice prefers short answers with line numbers", "disk full on the build runner", false},
		{"kafka consumer lag after broker restart", "the staging database password rotated on monday", false},
		{"OOMKilled worker in image resizer", "DNS resolution timeout for payments api", false},
	}
	for _, p := range pairs {
		v, _ := emb.Embed(context.Background(), []string{p.a, p.b})
		s := cos(v[0], v[1])
		if p.similar && s < th {
			t.Errorf("paraphrase below threshold %.2f: %.3f %q ~ %q", th, s, p.a, p.b)
		}
		if !p.similar && s >= th {
			t.Errorf("unrelated above threshold %.2f: %.3f %q ~ %q", th, s, p.a, p.b)
		}
	}
	v1, _ := emb.Embed(context.Background(), []string{"same text"})
	v2, _ := emb.Embed(context.Background(), []string{"same text"})
	if cos(v1[0], v2[0]) < 0.9999 {
		t.Fatal("not deterministic")
	}
}

// openAIEmbeddings speaks OpenAI's POST /v1/embeddings.
func openAIEmbeddings(t *testing.T, dim int, calls *atomic.Int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`))
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := make([]float32, dim)
			for j, c := range strings.ToLower(in) {
				v[(int(c)+j)%dim] += 1
			}
			data = append(data, item{Object: "embedding", Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
}

func TestLLMEmbedder(t *testing.T) {
	var calls atomic.Int32
	srv := openAIEmbeddings(t, 24, &calls)
	defer srv.Close()
	ctx := context.Background()
	e, err := memory.NewLLMEmbedder(ctx, memory.LLMEmbedderConfig{Model: "text-embedding-3-small", BaseURL: srv.URL + "/v1", APIKey: "test-key"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimension() != 24 || e.Name() != "openai:text-embedding-3-small" {
		t.Fatalf("probe: dim %d name %s", e.Dimension(), e.Name())
	}
	vs, err := e.Embed(ctx, []string{"disk full", "disk full", "kafka"})
	if err != nil || len(vs) != 3 {
		t.Fatalf("Embed = %d, %v", len(vs), err)
	}
	if s := cos(vs[0], vs[1]); s < 0.999 {
		t.Fatalf("same text cosine %.3f (vectors must be normalised)", s)
	}
	// Used by the embedded store end to end.
	db, err := memory.Open(ctx, memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	sc := memory.Scope{Tenant: "T", User: "U"}
	if err := st.Add(ctx, memory.Record{Tenant: "T", User: "U", Scope: memory.ScopeUser, Type: memory.TypeFact, Priority: 2, Content: "disk full on runner"}); err != nil {
		t.Fatal(err)
	}
	if h, err := st.Search(ctx, memory.Query{Scope: sc, Text: "disk full on runner"}); err != nil || len(h) != 1 {
		t.Fatalf("search with model embedder: %v %v", h, err)
	}
	// Changing the embedder on existing memories is a clear error.
	hash, _ := memory.NewHashEmbedder(0)
	_, err = memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: hash})
	if !errors.Is(err, memory.ErrDimension) || !strings.Contains(err.Error(), "EMBED_MODEL") {
		t.Fatalf("embedder change = %v; want ErrDimension naming the fix", err)
	}

	// A wrong key fails at construction with the provider's message.
	_, err = memory.NewLLMEmbedder(ctx, memory.LLMEmbedderConfig{Model: "m", BaseURL: srv.URL + "/v1", APIKey: "wrong"})
	if err == nil {
		t.Fatal("wrong key accepted")
	}
	if _, err := memory.NewLLMEmbedder(ctx, memory.LLMEmbedderConfig{}); err == nil {
		t.Fatal("missing model accepted")
	}
}
