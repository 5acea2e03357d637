package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeIndex is an in-memory SessionIndex.
type fakeIndex struct {
	mu       sync.Mutex
	claimed  map[string]bool
	sessions map[string]bool
}

func newFakeIndex() *fakeIndex {
	return &fakeIndex{claimed: map[string]bool{}, sessions: map[string]bool{}}
}

func (f *fakeIndex) Exists(_ context.Context, key string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[key], nil
}

func (f *fakeIndex) Claim(_ context.Context, key string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claimed[key] {
		return false, nil
	}
	f.claimed[key] = true
	return true, nil
}

// fakeAdapter records what the router delivered.
type fakeAdapter struct {
	mu      sync.Mutex
	replies []Reply
	posts   []Reply
	updates []string
	done    chan Reply
}

func newFakeAdapter() *fakeAdapter { return &fakeAdapter{done: make(chan Reply, 64)} }

func (a *fakeAdapter) Platform() string                       { return "test" }
func (a *fakeAdapter) Run(ctx context.Context, _ Inbox) error { <-ctx.Done(); return nil }
func (a *fakeAdapter) Post(_ context.Context, _ Conversation, r Reply) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.posts = append(a.posts, r)
	return "p1", nil
}
func (a *fakeAdapter) Open(context.Context, Attachment) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("hello\n")), nil
}
func (a *fakeAdapter) StartProgress(context.Context, Message) Progress { return (*fakeProgress)(a) }

type fakeProgress fakeAdapter

func (p *fakeProgress) Update(_ context.Context, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updates = append(p.updates, text)
}
func (p *fakeProgress) Finish(_ context.Context, r Reply) (string, error) {
	p.mu.Lock()
	p.replies = append(p.replies, r)
	p.mu.Unlock()
	p.done <- r
	return "r1", nil
}

// runnerFunc adapts a function to Runner.
type runnerFunc func(context.Context, Turn) (Reply, error)

func (f runnerFunc) Run(ctx context.Context, t Turn) (Reply, error) { return f(ctx, t) }

func startRouter(t *testing.T, run runnerFunc, idx *fakeIndex) (*Router, *fakeAdapter, context.CancelFunc, chan struct{}) {
	t.Helper()
	r, err := NewRouter(RouterConfig{Runner: run, Sessions: idx, Workers: 2, ShutdownGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAdapter()
	r.Attach(a)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = r.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	return r, a, cancel, stopped
}

func waitReply(t *testing.T, a *fakeAdapter) Reply {
	t.Helper()
	select {
	case r := <-a.done:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no reply within 5s")
		return Reply{}
	}
}

func msg(id, thread, text string, mentioned bool) Message {
	return Message{Platform: "test", Tenant: "T", Channel: "C", ID: id, Thread: thread, EventID: "ev-" + id, User: "U", Text: text, Mentioned: mentioned}
}

func TestNewRouterValidates(t *testing.T) {
	if _, err := NewRouter(RouterConfig{}); err == nil || !strings.Contains(err.Error(), "Runner") || !strings.Contains(err.Error(), "Sessions") {
		t.Fatalf("want both missing fields named, got %v", err)
	}
}

func TestRouterAnswersMentionOnceAndDropsDuplicates(t *testing.T) {
	idx := newFakeIndex()
	var calls int
	var mu sync.Mutex
	r, a, _, _ := startRouter(t, func(ctx context.Context, turn Turn) (Reply, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		rc, err := turn.Open(ctx, Attachment{Name: "x"})
		if err != nil {
			return Reply{}, err
		}
		b, _ := io.ReadAll(rc)
		turn.Progress("step 1/1: reading")
		return Reply{Text: "read " + strings.TrimSpace(string(b)) + " in " + turn.SessionKey}, nil
	}, idx)
	ctx := context.Background()
	m := msg("100", "", "why?", true)
	if err := r.Deliver(ctx, m); err != nil {
		t.Fatal(err)
	}
	// The same event retried, and the same message as a second event.
	if err := r.Deliver(ctx, m); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("retry: want ErrDuplicate, got %v", err)
	}
	twin := m
	twin.EventID = "other-event"
	if err := r.Deliver(ctx, twin); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("twin: want ErrDuplicate, got %v", err)
	}
	got := waitReply(t, a)
	if want := "read hello in test/T/C/100"; got.Text != want {
		t.Fatalf("reply %q, want %q", got.Text, want)
	}
	select {
	case extra := <-a.done:
		t.Fatalf("second reply: %+v", extra)
	case <-time.After(100 * time.Millisecond):
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.updates) != 1 || a.updates[0] != "step 1/1: reading" {
		t.Fatalf("progress updates %v", a.updates)
	}
}

func TestRouterThreadFollowUps(t *testing.T) {
	idx := newFakeIndex()
	r, a, _, _ := startRouter(t, func(ctx context.Context, turn Turn) (Reply, error) {
		return Reply{Text: turn.Message.Text}, nil
	}, idx)
	ctx := context.Background()
	// A plain message in a thread with no session is not for the bot, and
	// does not burn its ids: the mention twin still goes through.
	plain := msg("200", "150", "hello all", false)
	if err := r.Deliver(ctx, plain); !errors.Is(err, ErrNotForBot) {
		t.Fatalf("want ErrNotForBot, got %v", err)
	}
	mention := plain
	mention.Mentioned = true
	if err := r.Deliver(ctx, mention); err != nil {
		t.Fatalf("mention twin: %v", err)
	}
	waitReply(t, a)
	// Once the thread has a session, follow-ups need no mention.
	idx.mu.Lock()
	idx.sessions[plain.SessionKey()] = true
	idx.mu.Unlock()
	if err := r.Deliver(ctx, msg("201", "150", "and then?", false)); err != nil {
		t.Fatalf("follow-up: %v", err)
	}
	if got := waitReply(t, a); got.Text != "and then?" {
		t.Fatalf("got %q", got.Text)
	}
}

func TestRouterOneRunPerSessionInOrder(t *testing.T) {
	idx := newFakeIndex()
	var mu sync.Mutex
	running := map[string]int{}
	var order []string
	maxConcurrent := 0
	r, a, _, _ := startRouter(t, func(ctx context.Context, turn Turn) (Reply, error) {
		mu.Lock()
		running[turn.SessionKey]++
		if running[turn.SessionKey] > maxConcurrent {
			maxConcurrent = running[turn.SessionKey]
		}
		order = append(order, turn.Message.Text)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running[turn.SessionKey]--
		mu.Unlock()
		return Reply{Text: turn.Message.Text}, nil
	}, idx)
	ctx := context.Background()
	for i, text := range []string{"one", "two", "three"} {
		m := msg("30"+string(rune('0'+i)), "300", text, true)
		if err := r.Deliver(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		waitReply(t, a)
	}
	mu.Lock()
	defer mu.Unlock()
	if maxConcurrent != 1 {
		t.Fatalf("%d runs of one session at once", maxConcurrent)
	}
	if strings.Join(order, ",") != "one,two,three" {
		t.Fatalf("order %v", order)
	}
}

func TestRouterQueueFull(t *testing.T) {
	idx := newFakeIndex()
	release := make(chan struct{})
	r, err := NewRouter(RouterConfig{Runner: runnerFunc(func(ctx context.Context, turn Turn) (Reply, error) {
		<-release
		return Reply{Text: "ok"}, nil
	}), Sessions: idx, Workers: 1, QueuePerSession: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAdapter()
	r.Attach(a)
	ctx := context.Background()
	for i := range 2 {
		if err := r.Deliver(ctx, msg("40"+string(rune('0'+i)), "400", "q", true)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Deliver(ctx, msg("409", "400", "q", true)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("want ErrQueueFull, got %v", err)
	}
	close(release)
}

func TestRouterStopCancelsRunAndPanicsBecomeReplies(t *testing.T) {
	idx := newFakeIndex()
	r, a, _, _ := startRouter(t, func(ctx context.Context, turn Turn) (Reply, error) {
		switch turn.Message.Text {
		case "slow":
			<-ctx.Done()
			return Reply{}, ctx.Err()
		case "boom":
			panic("kaboom")
		}
		return Reply{Text: "fine"}, nil
	}, idx)
	ctx := context.Background()
	if err := r.Deliver(ctx, msg("500", "500", "slow", true)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := r.Deliver(ctx, msg("501", "500", "stop", true)); err != nil {
		t.Fatal(err)
	}
	got := waitReply(t, a)
	if !got.Failed || !strings.Contains(got.Text, "interrupted") {
		t.Fatalf("stopped run reply: %+v", got)
	}
	if err := r.Deliver(ctx, msg("600", "600", "boom", true)); err != nil {
		t.Fatal(err)
	}
	got = waitReply(t, a)
	if !got.Failed || !strings.Contains(got.Text, "kaboom") {
		t.Fatalf("panic reply: %+v", got)
	}
	// The router still serves after a panic.
	if err := r.Deliver(ctx, msg("700", "700", "hi", true)); err != nil {
		t.Fatal(err)
	}
	if got := waitReply(t, a); got.Text != "fine" {
		t.Fatalf("after panic: %+v", got)
	}
}

func TestRouterShutdownTellsQueuedThreads(t *testing.T) {
	idx := newFakeIndex()
	started := make(chan struct{}, 1)
	r, a, cancel, stopped := startRouter(t, func(ctx context.Context, turn Turn) (Reply, error) {
		started <- struct{}{}
		<-ctx.Done() // never finishes by itself
		return Reply{}, ctx.Err()
	}, idx)
	ctx := context.Background()
	if err := r.Deliver(ctx, msg("800", "800", "a", true)); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := r.Deliver(ctx, msg("801", "800", "b", true)); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-stopped
	if err := r.Deliver(ctx, msg("900", "900", "late", true)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after shutdown: want ErrClosed, got %v", err)
	}
	got := waitReply(t, a) // the running turn, cut off after the grace period
	if !got.Failed || !strings.Contains(got.Text, "interrupted") {
		t.Fatalf("cut-off turn: %+v", got)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.posts) != 1 || !strings.Contains(a.posts[0].Text, "restarting") {
		t.Fatalf("queued message not told: %+v", a.posts)
	}
}

func TestOpenLimited(t *testing.T) {
	rc := OpenLimited(io.NopCloser(strings.NewReader("0123456789")), 10)
	if b, err := io.ReadAll(rc); err != nil || len(b) != 10 {
		t.Fatalf("at the cap: %d bytes, %v", len(b), err)
	}
	rc = OpenLimited(io.NopCloser(strings.NewReader("0123456789A")), 10)
	if _, err := io.ReadAll(rc); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
}

func TestSessionKey(t *testing.T) {
	top := Message{Platform: "slack", Tenant: "T1", Channel: "C1", ID: "1.2"}
	reply := Message{Platform: "slack", Tenant: "T1", Channel: "C1", ID: "1.3", Thread: "1.2"}
	if top.SessionKey() != reply.SessionKey() {
		t.Fatalf("thread reply key %q != root key %q", reply.SessionKey(), top.SessionKey())
	}
	dm := Message{Platform: "slack", Tenant: "T1", Channel: "D1", ID: "5", User: "U/1", DM: true}
	if got := dm.SessionKey(); got != "slack/T1/dm/U%2F1" {
		t.Fatalf("dm key %q", got)
	}
}

// Every run has an id, handed to the runner and on the router's log lines.
func TestRouterRunIDOnLogsAndTurn(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	got := make(chan string, 1)
	r, err := NewRouter(RouterConfig{Runner: runnerFunc(func(_ context.Context, turn Turn) (Reply, error) {
		got <- turn.RunID
		return Reply{Text: "ok"}, nil
	}), Sessions: newFakeIndex(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAdapter()
	r.Attach(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := r.Deliver(context.Background(), msg("1", "", "hi", true)); err != nil {
		t.Fatal(err)
	}
	id := <-got
	waitReply(t, a)
	mu.Lock()
	defer mu.Unlock()
	if id == "" || !strings.Contains(logs.String(), "run_id="+id) {
		t.Fatalf("run id %q not on the run's log lines:\n%s", id, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
