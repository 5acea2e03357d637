package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills/dailydigest"
)

// fakeClock is a settable clock; At channels fire when Advance passes
// their time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{t, ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			keep = append(keep, w)
		}
	}
	c.waiters = keep
}

// pending reports how many At channels wait.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// poster is a fake adapter: it fails the first failures posts (with an
// error, or with an empty id when emptyID), then returns ids.
type poster struct {
	mu       sync.Mutex
	failures int
	emptyID  bool
	tries    int
	posts    []posted
	prefix   string
}

type posted struct {
	To    bot.Conversation
	Reply bot.Reply
	ID    string
}

func (p *poster) Post(_ context.Context, to bot.Conversation, r bot.Reply) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if p.tries <= p.failures {
		if p.emptyID {
			return "", nil
		}
		return "", errors.New("slack: service unavailable")
	}
	id := p.prefix + "msg-" + string(rune('a'+len(p.posts)))
	p.posts = append(p.posts, posted{to, r, id})
	return id, nil
}

func (p *poster) Tenant() string { return "T1" }

func (p *poster) all() []posted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]posted(nil), p.posts...)
}

func openDB(t *testing.T, dir string, now func() time.Time) *memory.DB {
	t.Helper()
	db, err := memory.Open(context.Background(), memory.Config{DataDir: dir, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sleeps records backoff waits without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func boolp(b bool) *bool { return &b }

// seedThread stores one analysed thread (a question, and an answer with
// the error signature fp, an hour before t0): the digest's input.
func seedThread(t *testing.T, st memory.Sessions, m bot.Message, fp string) {
	t.Helper()
	ctx := context.Background()
	key := m.SessionKey()
	if _, err := st.Ensure(ctx, memory.Session{Key: key, Platform: m.Platform, Tenant: m.Tenant, Channel: m.Channel, Thread: m.Thread}); err != nil {
		t.Fatal(err)
	}
	for _, turn := range []memory.Turn{
		{Session: key, Role: "user", Content: "why?", CreatedAt: t0.Add(-time.Hour)},
		{Session: key, Role: "assistant", Content: "db", Fingerprints: []string{fp}, CreatedAt: t0.Add(-time.Hour)},
	} {
		if _, err := st.AppendTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
}

// startDigest starts a scheduler whose one job posts the 24-hour
// daily-digest to target at 09:00 UTC through p (the platform's poster),
// seeding sessions in db. It stops when the test ends.
func startDigest(t *testing.T, clk *fakeClock, db *memory.DB, platform string, p Poster, target string) *Scheduler {
	t.Helper()
	dd, err := dailydigest.New(dailydigest.Config{Sessions: db.Sessions(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{
		DB: db.SQL(), Clock: clk, Logger: quiet, Sessions: db.Sessions(), Skills: registry(t, dd),
		Posters: map[string]Poster{platform: p},
		Defs:    []Def{{Name: "digest", Schedule: "0 9 * * *", Timezone: "UTC", Skill: "daily-digest", Args: map[string]any{"window": "24h"}, Target: target}},
	})
	if err != nil || len(s.Problems()) > 0 {
		t.Fatal(err, s.Problems())
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); s.Wait() })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
