package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
)

// Hash embedder defaults.
const (
	DefaultHashDimension = 256
	// hashMinScore is tuned by TestHashEmbedderThreshold: paraphrases that
	// share a few content words score above it, unrelated sentences below.
	hashMinScore = 0.25
)

// HashEmbedder is the offline embedder: deterministic, no model, no
// network. A text becomes signed hashed features of its words (weight 1),
// word pairs (0.5) and character trigrams of each word (spread over the
// word, total weight 1), L2-normalised. Similar wording gives similar
// vectors; it knows nothing of synonyms. Safe for concurrent use.
type HashEmbedder struct {
	dim int
}

// NewHashEmbedder returns a hash embedder of the given dimension; 0 means
// DefaultHashDimension.
func NewHashEmbedder(dim int) (*HashEmbedder, error) {
	if dim == 0 {
		dim = DefaultHashDimension
	}
	if dim < 16 || dim > 8192 {
		return nil, fmt.Errorf("memory: hash embedder dimension %d is outside 16..8192", dim)
	}
	return &HashEmbedder{dim: dim}, nil
}

// Name is "hash-v1"; it changes when the features change.
func (h *HashEmbedder) Name() string { return "hash-v1" }

// Dimension returns the vector size.
func (h *HashEmbedder) Dimension() int { return h.dim }

// MinScore is the default similarity threshold.
func (h *HashEmbedder) MinScore() float32 { return hashMinScore }

// Embed returns one unit vector per text (zero vector for a text without
// words).
func (h *HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.embed(t)
	}
	return out, nil
}

func (h *HashEmbedder) embed(text string) []float32 {
	v := make([]float32, h.dim)
	words := tokenize(text)
	prev := ""
	for _, w := range words {
		h.add(v, "w:"+w, 1)
		if prev != "" {
			h.add(v, "b:"+prev+" "+w, 0.5)
		}
		prev = w
		padded := "^" + w + "$"
		r := []rune(padded)
		if len(r) >= 3 {
			n := len(r) - 2
			wt := float32(1) / float32(n)
			for j := 0; j < n; j++ {
				h.add(v, "c:"+string(r[j:j+3]), wt)
			}
		}
	}
	Normalize(v)
	return v
}

func (h *HashEmbedder) add(v []float32, feature string, w float32) {
	f := fnv.New64a()
	f.Write([]byte(feature))
	x := f.Sum64()
	i := int(x % uint64(h.dim))
	if x>>63 == 1 {
		w = -w
	}
	v[i] += w
}

// stopwords carry no topic; they are dropped before hashing.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true,
	"at": true, "for": true, "with": true, "is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"it": true, "its": true, "this": true, "that": true, "these": true, "those": true, "by": true, "from": true, "as": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true, "he": true, "she": true, "they": true,
	"do": true, "does": true, "did": true, "has": true, "have": true, "had": true, "not": true, "no": true, "so": true,
	"but": true, "if": true, "then": true, "than": true, "there": true, "what": true, "which": true, "who": true, "when": true,
	"about": true, "into": true, "can": true, "will": true, "would": true, "should": true, "please": true, "also": true,
}

// tokenize lowercases and splits on anything that is not a letter or a
// digit, dropping stopwords.
func tokenize(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := f[:0]
	for _, w := range f {
		if !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}
