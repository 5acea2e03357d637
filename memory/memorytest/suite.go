// Package memorytest is the behavioural test suite every long-term memory
// store must pass (embedded, Qdrant, the Resilient wrapper): the same
// records give the same answers, and scopes isolate users, channels and
// tenants in the store layer.
package memorytest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
)

// Factory returns a fresh, empty store. The suite closes it.
type Factory func(t *testing.T) memory.LongTerm

// Scopes used by the suite.
var (
	alice   = memory.Scope{Tenant: "T1", User: "alice", Channel: "C-ops"}
	bob     = memory.Scope{Tenant: "T1", User: "bob", Channel: "C-ops"}
	aliceDM = memory.Scope{Tenant: "T1", User: "alice"}
	bobDev  = memory.Scope{Tenant: "T1", User: "bob", Channel: "C-dev"}
	other   = memory.Scope{Tenant: "T2", User: "alice", Channel: "C-ops"}
)

func rec(s memory.Scope, scope, typ string, prio int, content string) memory.Record {
	return memory.Record{Tenant: s.Tenant, User: s.User, Channel: s.Channel, Scope: scope, Type: typ, Priority: prio, Content: content}
}

// Run runs the suite against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	t.Run("SearchFindsParaphraseNotUnrelated", func(t *testing.T) { searchParaphrase(t, newStore(t)) })
	t.Run("OrderByScoreThenPriority", func(t *testing.T) { ordering(t, newStore(t)) })
	t.Run("TopKDefaultFive", func(t *testing.T) { topK(t, newStore(t)) })
	t.Run("IncompleteScopeIsRefused", func(t *testing.T) { incompleteScope(t, newStore(t)) })
	t.Run("Isolation", func(t *testing.T) { isolation(t, newStore(t)) })
	t.Run("DeleteReallyDeletes", func(t *testing.T) { deleteByID(t, newStore(t)) })
	t.Run("SecretsRedactedBeforeWrite", func(t *testing.T) { redacted(t, newStore(t)) })
	t.Run("Filters", func(t *testing.T) { filters(t, newStore(t)) })
	t.Run("Cleanup", func(t *testing.T) { cleanup(t, newStore(t)) })
	t.Run("InvalidRecordsRefused", func(t *testing.T) { invalid(t, newStore(t)) })
	t.Run("ReplaceByID", func(t *testing.T) { replace(t, newStore(t)) })
}

func mustAdd(t *testing.T, s memory.LongTerm, recs ...memory.Record) {
	t.Helper()
	if err := s.Add(context.Background(), recs...); err != nil {
		t.Fatalf("Add: %v", err)
	}
}

func search(t *testing.T, s memory.LongTerm, q memory.Query) []memory.Hit {
	t.Helper()
	h, err := s.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	return h
}

func contents(h []memory.Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = x.Content
	}
	return out
}

func searchParaphrase(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	mustAdd(t, s,
		rec(alice, memory.ScopeChannel, memory.TypeIncident, 3, "checkout service outage caused by postgres connection pool exhaustion"),
		rec(alice, memory.ScopeUser, memory.TypePreference, 2, "alice prefers short answers with line numbers"),
	)
	h := search(t, s, memory.Query{Scope: alice, Text: "postgres connection pool exhausted again"})
	if len(h) != 1 || !strings.Contains(h[0].Content, "pool exhaustion") {
		t.Fatalf("paraphrase: got %q", contents(h))
	}
	if h[0].Score <= 0 || h[0].Score > 1.0001 || h[0].ID == "" || h[0].CreatedAt.IsZero() || h[0].Tenant != "T1" {
		t.Fatalf("hit fields: %+v", h[0])
	}
	if h := search(t, s, memory.Query{Scope: alice, Text: "kubernetes ingress certificate renewal"}); len(h) != 0 {
		t.Fatalf("unrelated query matched: %q", contents(h))
	}
}

func ordering(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	text := "redis timeout during deploy of billing"
	mustAdd(t, s,
		rec(alice, memory.ScopeChannel, memory.TypeFact, 1, text),
		rec(alice, memory.ScopeChannel, memory.TypeFact, 4, text),
		rec(alice, memory.ScopeChannel, memory.TypeFact, 5, "redis timeout"),
	)
	h := search(t, s, memory.Query{Scope: alice, Text: text})
	if len(h) != 3 {
		t.Fatalf("got %d hits: %q", len(h), contents(h))
	}
	if h[0].Priority != 4 || h[1].Priority != 1 || h[2].Content != "redis timeout" {
		t.Fatalf("order: %+v", h)
	}
	if h[0].Score < h[2].Score {
		t.Fatalf("scores not descending: %v %v", h[0].Score, h[2].Score)
	}
}

func topK(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	var recs []memory.Record
	for i := 0; i < 8; i++ {
		recs = append(recs, rec(alice, memory.ScopeChannel, memory.TypeFact, i%6, "disk full on build runner number "+strings.Repeat("x", i+1)))
	}
	mustAdd(t, s, recs...)
	if h := search(t, s, memory.Query{Scope: alice, Text: "disk full on build runner"}); len(h) != memory.DefaultLimit {
		t.Fatalf("default limit: got %d", len(h))
	}
	if h := search(t, s, memory.Query{Scope: alice, Text: "disk full on build runner", Limit: 2}); len(h) != 2 {
		t.Fatalf("limit 2: got %d", len(h))
	}
}

func incompleteScope(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	for _, sc := range []memory.Scope{{}, {Tenant: "T1"}, {User: "alice", Channel: "C-ops"}} {
		if _, err := s.Search(ctx, memory.Query{Scope: sc, Text: "x"}); !errors.Is(err, memory.ErrScope) {
			t.Errorf("Search(%+v) = %v; want ErrScope", sc, err)
		}
		if _, err := s.List(ctx, memory.Filter{Scope: sc}, 0); !errors.Is(err, memory.ErrScope) {
			t.Errorf("List(%+v) = %v; want ErrScope", sc, err)
		}
		if _, err := s.Delete(ctx, memory.Filter{Scope: sc}); !errors.Is(err, memory.ErrScope) {
			t.Errorf("Delete(%+v) = %v; want ErrScope", sc, err)
		}
	}
	if err := s.Add(ctx, rec(aliceDM, memory.ScopeChannel, memory.TypeFact, 1, "channel memory in a DM")); !errors.Is(err, memory.ErrScope) {
		t.Errorf("Add(channel memory without channel) = %v; want ErrScope", err)
	}
}

func isolation(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	mustAdd(t, s,
		rec(alice, memory.ScopeUser, memory.TypePreference, 3, "alice deploys payments on fridays"),
		rec(aliceDM, memory.ScopeUser, memory.TypeFact, 3, "alice payments salary dm secret plan"),
		rec(alice, memory.ScopeChannel, memory.TypeIncident, 3, "payments outage in ops channel from bad deploy"),
		rec(other, memory.ScopeChannel, memory.TypeIncident, 3, "payments outage other tenant"),
	)
	q := "payments"
	all := memory.Query{Scope: alice, Text: q, MinScore: 0.01}
	got := contents(search(t, s, all))
	if len(got) != 2 || !has(got, "alice deploys payments on fridays") || !has(got, "payments outage in ops channel from bad deploy") {
		t.Fatalf("alice in channel sees %q", got)
	}
	// A DM sees the user's own memories, DM ones included, but no channel's.
	got = contents(search(t, s, memory.Query{Scope: aliceDM, Text: q, MinScore: 0.01}))
	if len(got) != 2 || !has(got, "alice payments salary dm secret plan") || has(got, "payments outage in ops channel from bad deploy") {
		t.Fatalf("alice in DM sees %q", got)
	}
	// Bob in the same channel sees the channel memory only.
	got = contents(search(t, s, memory.Query{Scope: bob, Text: q, MinScore: 0.01}))
	if len(got) != 1 || got[0] != "payments outage in ops channel from bad deploy" {
		t.Fatalf("bob in channel sees %q", got)
	}
	// Bob in another channel sees nothing.
	if got := search(t, s, memory.Query{Scope: bobDev, Text: q, MinScore: 0.01}); len(got) != 0 {
		t.Fatalf("bob in another channel sees %q", contents(got))
	}
	l, err := s.List(ctx, memory.Filter{Scope: bobDev}, 0)
	if err != nil || len(l) != 0 {
		t.Fatalf("bob lists in another channel: %v %v", l, err)
	}
	l, err = s.List(ctx, memory.Filter{Scope: bob}, 0)
	if err != nil || len(l) != 1 || l[0].Scope != memory.ScopeChannel {
		t.Fatalf("bob lists in ops: %+v %v", l, err)
	}
	// Other tenant: only its own.
	got = contents(search(t, s, memory.Query{Scope: other, Text: q, MinScore: 0.01}))
	if len(got) != 1 || got[0] != "payments outage other tenant" {
		t.Fatalf("other tenant sees %q", got)
	}
	// Bob cannot delete alice's memories, not even by id.
	aliceRecs, err := s.List(ctx, memory.Filter{Scope: aliceDM}, 0)
	if err != nil || len(aliceRecs) != 2 {
		t.Fatalf("alice DM list: %+v %v", aliceRecs, err)
	}
	ids := []string{aliceRecs[0].ID, aliceRecs[1].ID}
	for _, sc := range []memory.Scope{bob, bobDev, {Tenant: "T2", User: "alice"}} {
		n, err := s.Delete(ctx, memory.Filter{Scope: sc, IDs: ids})
		if err != nil || n != 0 {
			t.Fatalf("Delete by %+v = %d, %v; want 0", sc, n, err)
		}
	}
	// Bob in another channel cannot delete the ops channel memory.
	if n, _ := s.Delete(ctx, memory.Filter{Scope: bobDev}); n != 0 {
		t.Fatalf("bob in dev deleted %d", n)
	}
	if l, _ := s.List(ctx, memory.Filter{Scope: aliceDM}, 0); len(l) != 2 {
		t.Fatalf("alice's memories after others' deletes: %d", len(l))
	}
	if l, _ := s.List(ctx, memory.Filter{Scope: alice}, 0); len(l) != 2 {
		t.Fatalf("alice in ops after others' deletes: %d", len(l))
	}
}

func has(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func deleteByID(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	mustAdd(t, s,
		rec(alice, memory.ScopeUser, memory.TypePreference, 2, "alice wants timestamps in UTC"),
		rec(alice, memory.ScopeUser, memory.TypePreference, 2, "alice wants answers in french"),
	)
	l, err := s.List(ctx, memory.Filter{Scope: alice}, 0)
	if err != nil || len(l) != 2 {
		t.Fatalf("list: %v %v", l, err)
	}
	var id string
	for _, r := range l {
		if strings.Contains(r.Content, "UTC") {
			id = r.ID
		}
	}
	n, err := s.Delete(ctx, memory.Filter{Scope: alice, IDs: []string{id}})
	if err != nil || n != 1 {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	if h := search(t, s, memory.Query{Scope: alice, Text: "alice wants timestamps in UTC"}); len(h) != 1 || strings.Contains(h[0].Content, "UTC") {
		t.Fatalf("deleted memory still found: %q", contents(h))
	}
	if n, _ := s.Delete(ctx, memory.Filter{Scope: alice, IDs: []string{id}}); n != 0 {
		t.Fatalf("second delete = %d", n)
	}
}

func redacted(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	mustAdd(t, s, rec(alice, memory.ScopeChannel, memory.TypeFact, 3, "staging db is postgres://app:hunter2@db:5432 and the bot uses xoxb-1234567890-abcdefghijkl"))
	l, err := s.List(ctx, memory.Filter{Scope: alice}, 0)
	if err != nil || len(l) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}
	if strings.Contains(l[0].Content, "hunter2") || strings.Contains(l[0].Content, "xoxb-") || !strings.Contains(l[0].Content, "[REDACTED]") {
		t.Fatalf("secret kept: %q", l[0].Content)
	}
}

func filters(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	inc := rec(alice, memory.ScopeChannel, memory.TypeIncident, 4, "OOMKilled worker after memory leak in image resizer")
	inc.Fingerprints = []string{"tpl-oom", "tpl-leak"}
	inc.Source = memory.Source{Session: "s1", Skill: "analyze-log", File: "app.log", Line: 42, Link: "https://x/thread"}
	low := rec(alice, memory.ScopeChannel, memory.TypeFact, 0, "image resizer worker memory leak noted")
	mustAdd(t, s, inc, low)
	h := search(t, s, memory.Query{Scope: alice, Text: "memory leak image resizer worker", Types: []string{memory.TypeIncident}})
	if len(h) != 1 || h[0].Type != memory.TypeIncident {
		t.Fatalf("type filter: %+v", h)
	}
	if h[0].Source != inc.Source || len(h[0].Fingerprints) != 2 {
		t.Fatalf("source/fingerprints not kept: %+v", h[0].Record)
	}
	if h := search(t, s, memory.Query{Scope: alice, Text: "memory leak image resizer worker", MinPriority: 1}); len(h) != 1 || h[0].Priority != 4 {
		t.Fatalf("min priority: %+v", h)
	}
	if h := search(t, s, memory.Query{Scope: alice, Text: "memory leak image resizer worker", Fingerprint: "tpl-leak"}); len(h) != 1 || h[0].Type != memory.TypeIncident {
		t.Fatalf("fingerprint search: %+v", h)
	}
	l, err := s.List(ctx, memory.Filter{Scope: alice, Fingerprint: "tpl-oom"}, 0)
	if err != nil || len(l) != 1 || l[0].Type != memory.TypeIncident {
		t.Fatalf("fingerprint list: %+v %v", l, err)
	}
	zero := 0
	l, _ = s.List(ctx, memory.Filter{Scope: alice, MaxPriority: &zero}, 0)
	if len(l) != 1 || l[0].Priority != 0 {
		t.Fatalf("max priority list: %+v", l)
	}
	if l, _ := s.List(ctx, memory.Filter{Scope: alice}, 1); len(l) != 1 {
		t.Fatalf("list limit: %d", len(l))
	}
}

func cleanup(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(typ string, prio int, age time.Duration, content string) memory.Record {
		r := rec(alice, memory.ScopeChannel, typ, prio, content)
		r.CreatedAt = now.Add(-age)
		return r
	}
	otherT := mk(memory.TypeFact, 0, 48*time.Hour, "other tenant old low fact")
	otherT.Tenant = "T2"
	mustAdd(t, s,
		mk(memory.TypeFact, 1, 48*time.Hour, "old low fact"),             // deleted: priority <= 1, > 24h
		mk(memory.TypeFact, 1, time.Hour, "recent low fact"),             // kept: recent
		mk(memory.TypeFact, 2, 48*time.Hour, "old normal fact"),          // kept: priority 2
		mk(memory.TypeTaskResult, 4, 10*24*time.Hour, "old task result"), // deleted: TTL 7d
		mk(memory.TypeTaskResult, 4, 2*24*time.Hour, "young task result"),
		otherT, // deleted: cleanup spans tenants
	)
	n, err := s.Cleanup(ctx, now, 1, 24*time.Hour, map[string]time.Duration{memory.TypeTaskResult: 7 * 24 * time.Hour})
	if err != nil || n != 3 {
		t.Fatalf("Cleanup = %d, %v; want 3", n, err)
	}
	l, _ := s.List(ctx, memory.Filter{Scope: alice}, 0)
	var left []string
	for _, r := range l {
		left = append(left, r.Content)
	}
	if len(left) != 3 || !has(left, "recent low fact") || !has(left, "old normal fact") || !has(left, "young task result") {
		t.Fatalf("left after cleanup: %q", left)
	}
	if l, _ := s.List(ctx, memory.Filter{Scope: memory.Scope{Tenant: "T2", Channel: "C-ops"}}, 0); len(l) != 0 {
		t.Fatalf("other tenant left: %+v", l)
	}
}

func invalid(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	for _, r := range []memory.Record{
		rec(alice, memory.ScopeUser, "gossip", 1, "x"),
		rec(alice, "everyone", memory.TypeFact, 1, "x"),
		rec(alice, memory.ScopeUser, memory.TypeFact, 9, "x"),
		rec(alice, memory.ScopeUser, memory.TypeFact, 1, "   "),
	} {
		if err := s.Add(ctx, r); err == nil {
			t.Errorf("Add(%+v) accepted", r)
		}
	}
	if l, _ := s.List(ctx, memory.Filter{Scope: alice}, 0); len(l) != 0 {
		t.Fatalf("invalid records stored: %+v", l)
	}
}

func replace(t *testing.T, s memory.LongTerm) {
	defer s.Close()
	ctx := context.Background()
	r := rec(alice, memory.ScopeUser, memory.TypePreference, 2, "alice likes tables")
	r.ID = memory.NewID()
	mustAdd(t, s, r)
	r.Content = "alice likes bullet lists"
	mustAdd(t, s, r)
	l, err := s.List(ctx, memory.Filter{Scope: alice}, 0)
	if err != nil || len(l) != 1 || l[0].Content != "alice likes bullet lists" || l[0].ID != r.ID {
		t.Fatalf("replace: %+v %v", l, err)
	}
}
