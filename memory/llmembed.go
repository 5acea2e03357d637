package memory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/openai"
)

// defaultLLMMinScore is the threshold for model embeddings (OpenAI-style
// models put unrelated short texts around 0.1–0.3 and paraphrases above
// 0.45). Tune with LLMEmbedderConfig.MinScore.
const defaultLLMMinScore = 0.4

// LLMEmbedderConfig configures NewLLMEmbedder.
type LLMEmbedderConfig struct {
	// Model is the embedding model (EMBED_MODEL). Required.
	Model string
	// BaseURL of an OpenAI-compatible API (EMBED_BASE_URL, else
	// LLM_BASE_URL), e.g. "https://api.openai.com/v1". Optional; zero
	// means OpenAI.
	BaseURL string
	// APIKey (EMBED_API_KEY, else LLM_API_KEY). Optional for local servers.
	APIKey string
	// Dimension of the model's vectors. Optional; zero means ask the model
	// once in NewLLMEmbedder.
	Dimension int
	// MinScore is the search threshold. Optional; zero means 0.4.
	MinScore float32
	// HTTPClient is optional; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
}

// LLMEmbedder embeds with a model through langchaingo's OpenAI client
// (any OpenAI-compatible /v1/embeddings endpoint). Vectors are
// L2-normalised. Safe for concurrent use.
type LLMEmbedder struct {
	emb      *embeddings.EmbedderImpl
	name     string
	dim      int
	minScore float32
}

// NewLLMEmbedder builds the embedder; with Dimension zero it embeds one
// probe text to learn the dimension, so a wrong URL, key or model fails
// here with the provider's message.
func NewLLMEmbedder(ctx context.Context, cfg LLMEmbedderConfig) (*LLMEmbedder, error) {
	if cfg.Model == "" {
		return nil, errors.New("memory: LLMEmbedderConfig.Model (EMBED_MODEL) is required")
	}
	if cfg.Dimension < 0 || cfg.MinScore < 0 || cfg.MinScore >= 1 {
		return nil, errors.New("memory: Dimension must not be negative and MinScore must be in [0, 1)")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.MinScore == 0 {
		cfg.MinScore = defaultLLMMinScore
	}
	key := cfg.APIKey
	if key == "" {
		key = "unused" // local OpenAI-compatible servers take any key
	}
	opts := []openai.Option{openai.WithToken(key), openai.WithEmbeddingModel(cfg.Model), openai.WithHTTPClient(cfg.HTTPClient), openai.WithModel(cfg.Model)}
	if cfg.BaseURL != "" {
		opts = append(opts, openai.WithBaseURL(cfg.BaseURL))
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("memory: embedder client: %w", err)
	}
	emb, err := embeddings.NewEmbedder(llm, embeddings.WithStripNewLines(true))
	if err != nil {
		return nil, fmt.Errorf("memory: embedder: %w", err)
	}
	e := &LLMEmbedder{emb: emb, name: "openai:" + cfg.Model, dim: cfg.Dimension, minScore: cfg.MinScore}
	if e.dim == 0 {
		v, err := emb.EmbedQuery(ctx, "dimension probe")
		if err != nil {
			return nil, fmt.Errorf("memory: probe embedding model %q: %w", cfg.Model, err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("memory: embedding model %q returned an empty vector", cfg.Model)
		}
		e.dim = len(v)
	}
	return e, nil
}

// Name is "openai:<model>".
func (e *LLMEmbedder) Name() string { return e.name }

// Dimension returns the vector size.
func (e *LLMEmbedder) Dimension() int { return e.dim }

// MinScore is the default search threshold.
func (e *LLMEmbedder) MinScore() float32 { return e.minScore }

// Embed embeds the texts; a vector of the wrong size is ErrDimension.
func (e *LLMEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vs, err := e.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vs), len(texts))
	}
	for _, v := range vs {
		if len(v) != e.dim {
			return nil, fmt.Errorf("%w: model %s returned %d dimensions, expected %d", ErrDimension, e.name, len(v), e.dim)
		}
		Normalize(v)
	}
	return vs, nil
}
