package memory

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/agent/redact"
)

// Limits of long-term memories.
const (
	// DefaultLimit is how many hits Search returns when Query.Limit is 0.
	DefaultLimit = 5
	// MaxLimit caps Query.Limit.
	MaxLimit = 50
	// MaxContent is the longest content kept (in bytes): memories are
	// distilled sentences, never raw log dumps. Longer content is cut.
	MaxContent = 1000
	// MaxPriority is the highest priority.
	MaxPriority = 5
)

// ErrInvalid reports a record the store refuses (bad type, scope kind,
// priority or empty content).
var ErrInvalid = errors.New("invalid memory")

// Validate reports ErrScope when the scope cannot select anything safely:
// a tenant is required, and a user or a channel (or both).
func (s Scope) Validate() error {
	if s.Tenant == "" {
		return fmt.Errorf("%w: tenant is required", ErrScope)
	}
	if s.User == "" && s.Channel == "" {
		return fmt.Errorf("%w: a user or a channel is required", ErrScope)
	}
	return nil
}

// Allows reports whether a record is visible in the scope. It is the one
// rule every store applies:
//   - same tenant, always;
//   - user memories only for their user, and a user memory made in a DM
//     (no channel) only in DMs, so DM memories never appear in a channel;
//   - channel memories only in their channel.
func (s Scope) Allows(r Record) bool {
	if r.Tenant != s.Tenant || s.Tenant == "" {
		return false
	}
	switch r.Scope {
	case ScopeUser:
		return s.User != "" && r.User == s.User && (s.Channel == "" || r.Channel != "")
	case ScopeChannel:
		return s.Channel != "" && r.Channel == s.Channel
	}
	return false
}

// ValidType reports whether t is a known memory type.
func ValidType(t string) bool {
	switch t {
	case TypePreference, TypeFact, TypeIncident, TypeTaskResult:
		return true
	}
	return false
}

// Prepare validates a record before it is written and fills it in: a new
// ID (a UUID) when empty, CreatedAt when zero, content redacted (secrets
// replaced by "[REDACTED]"), trimmed and cut to MaxContent. Stores call it
// on every write; callers may call it to learn the ID early.
func Prepare(r Record, now time.Time) (Record, error) {
	var errs []error
	if r.Tenant == "" {
		errs = append(errs, fmt.Errorf("%w: tenant is required", ErrScope))
	}
	switch r.Scope {
	case ScopeUser:
		if r.User == "" {
			errs = append(errs, fmt.Errorf("%w: a user memory needs a user", ErrScope))
		}
	case ScopeChannel:
		if r.Channel == "" {
			errs = append(errs, fmt.Errorf("%w: a channel memory needs a channel (there is none in a DM)", ErrScope))
		}
	default:
		errs = append(errs, fmt.Errorf("%w: scope %q is not %q or %q", ErrInvalid, r.Scope, ScopeUser, ScopeChannel))
	}
	if !ValidType(r.Type) {
		errs = append(errs, fmt.Errorf("%w: type %q is not one of preference, fact, incident, task_result", ErrInvalid, r.Type))
	}
	if r.Priority < 0 || r.Priority > MaxPriority {
		errs = append(errs, fmt.Errorf("%w: priority %d is outside 0..%d", ErrInvalid, r.Priority, MaxPriority))
	}
	content, _ := redact.String(strings.TrimSpace(r.Content))
	if content == "" {
		errs = append(errs, fmt.Errorf("%w: content is empty", ErrInvalid))
	}
	if err := errors.Join(errs...); err != nil {
		return Record{}, err
	}
	r.Content = cut(content, MaxContent)
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, nil
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// NewID returns a random UUID (version 4), the id form Qdrant accepts.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Match reports whether a visible record passes the filter's other
// conditions (ids, types, priority, dates, fingerprint). It does not check
// the scope; see Scope.Allows.
func (f Filter) Match(r Record) bool {
	if len(f.IDs) > 0 && !slices.Contains(f.IDs, r.ID) {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, r.Type) {
		return false
	}
	if f.MaxPriority != nil && r.Priority > *f.MaxPriority {
		return false
	}
	if !f.CreatedBefore.IsZero() && !r.CreatedAt.Before(f.CreatedBefore) {
		return false
	}
	if !f.CreatedAfter.IsZero() && !r.CreatedAt.After(f.CreatedAfter) {
		return false
	}
	if f.Fingerprint != "" && !slices.Contains(r.Fingerprints, f.Fingerprint) {
		return false
	}
	return true
}

// Match reports whether a visible record passes the query's conditions
// other than scope and score.
func (q Query) Match(r Record) bool {
	if len(q.Types) > 0 && !slices.Contains(q.Types, r.Type) {
		return false
	}
	if r.Priority < q.MinPriority {
		return false
	}
	if q.Fingerprint != "" && !slices.Contains(r.Fingerprints, q.Fingerprint) {
		return false
	}
	return true
}

// Expired reports whether Cleanup removes the record: priority <=
// maxPriority and older than olderThan, or older than its type's TTL.
func Expired(r Record, now time.Time, maxPriority int, olderThan time.Duration, ttl map[string]time.Duration) bool {
	if olderThan > 0 && r.Priority <= maxPriority && r.CreatedAt.Before(now.Add(-olderThan)) {
		return true
	}
	if d, ok := ttl[r.Type]; ok && d > 0 && r.CreatedAt.Before(now.Add(-d)) {
		return true
	}
	return false
}

// SortHits orders hits by score, then priority, then newest first.
func SortHits(h []Hit) {
	slices.SortStableFunc(h, func(a, b Hit) int {
		switch {
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		case a.Priority != b.Priority:
			return b.Priority - a.Priority
		default:
			return b.CreatedAt.Compare(a.CreatedAt)
		}
	})
}

// limit returns the effective search limit.
func (q Query) limit() int {
	switch {
	case q.Limit <= 0:
		return DefaultLimit
	case q.Limit > MaxLimit:
		return MaxLimit
	}
	return q.Limit
}

// EffectiveLimit returns the number of hits a search returns at most.
func (q Query) EffectiveLimit() int { return q.limit() }

// Normalize scales v to unit length in place (a zero vector stays zero).
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte, dst []float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// dot is the inner product of two equal-length vectors; with unit vectors
// it is the cosine similarity. Unrolled by eight with independent
// accumulators, the fastest plain-Go form of the scan loop.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
