package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// TestMain uses a plain line reader for the evidence guardrail while the
// log engine's Scan is not in the tree yet.
func TestMain(m *testing.M) {
	dir, _ := os.MkdirTemp("", "agent-probe")
	p := filepath.Join(dir, "probe.log")
	os.WriteFile(p, []byte("a\nb\n"), 0o600)
	if err := logscan.Scan(context.Background(), p, logscan.Options{}, func(int, string) error { return nil }); err != nil {
		scanFile = plainScan
	}
	os.RemoveAll(dir)
	os.Exit(m.Run())
}

func plainScan(ctx context.Context, path string, _ logscan.Options, fn func(int, string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			if err == logscan.ErrStop {
				return nil
			}
			return err
		}
	}
	return sc.Err()
}

// memSessions is an in-memory memory.Sessions for tests.
type memSessions struct {
	mu       sync.Mutex
	root     string
	sessions map[string]memory.Session
	turns    map[string][]memory.Turn
	files    map[string][]memory.File
	notes    map[string][]memory.Note
	nextID   int64
}

func newMemSessions(t testing.TB) *memSessions {
	return &memSessions{root: t.TempDir(), sessions: map[string]memory.Session{}, turns: map[string][]memory.Turn{},
		files: map[string][]memory.File{}, notes: map[string][]memory.Note{}}
}

func (m *memSessions) Ensure(_ context.Context, s memory.Session) (memory.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.sessions[s.Key]; ok {
		return old, nil
	}
	m.sessions[s.Key] = s
	return s, nil
}
func (m *memSessions) Get(_ context.Context, key string) (memory.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return s, memory.ErrNotFound
	}
	return s, nil
}
func (m *memSessions) Exists(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.sessions[key]
	return ok, nil
}
func (m *memSessions) update(key string, fn func(*memory.Session)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return memory.ErrNotFound
	}
	fn(&s)
	m.sessions[key] = s
	return nil
}
func (m *memSessions) SetStatus(_ context.Context, key, st string) error {
	return m.update(key, func(s *memory.Session) { s.Status = st })
}
func (m *memSessions) SetSummary(_ context.Context, key, v string) error {
	return m.update(key, func(s *memory.Session) { s.Summary = v })
}
func (m *memSessions) SetPlan(_ context.Context, key, v string) error {
	return m.update(key, func(s *memory.Session) { s.Plan = v })
}
func (m *memSessions) AppendTurn(_ context.Context, t memory.Turn) (memory.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	t.ID = m.nextID
	m.turns[t.Session] = append(m.turns[t.Session], t)
	return t, nil
}
func (m *memSessions) Turns(_ context.Context, key string, limit int) ([]memory.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.turns[key]
	if limit > 0 && len(ts) > limit {
		ts = ts[len(ts)-limit:]
	}
	return append([]memory.Turn(nil), ts...), nil
}
func (m *memSessions) AddFile(_ context.Context, f memory.File) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[f.Session] = append(m.files[f.Session], f)
	return nil
}
func (m *memSessions) Files(_ context.Context, key string) ([]memory.File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]memory.File(nil), m.files[key]...), nil
}
func (m *memSessions) AddNote(_ context.Context, n memory.Note) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes[n.Session] = append(m.notes[n.Session], n)
	return nil
}
func (m *memSessions) Notes(_ context.Context, key string) ([]memory.Note, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]memory.Note(nil), m.notes[key]...), nil
}
func (m *memSessions) Workspace(key string) (string, error) {
	dir := filepath.Join(m.root, strings.NewReplacer("/", "_", "%", "_").Replace(key))
	return dir, os.MkdirAll(dir, 0o750)
}
func (m *memSessions) ListSessions(context.Context, string, string, string, time.Time, time.Time) ([]memory.Session, error) {
	return nil, nil
}
func (m *memSessions) Claim(context.Context, string) (bool, error) { return true, nil }

// memLongTerm is an in-memory long-term store with scope filtering and a
// word-overlap search, for tests.
type memLongTerm struct {
	mu   sync.Mutex
	recs []memory.Record
	n    int
}

func (m *memLongTerm) visible(s memory.Scope, r memory.Record) bool {
	if r.Tenant != s.Tenant {
		return false
	}
	switch r.Scope {
	case memory.ScopeUser:
		return s.User != "" && r.User == s.User
	case memory.ScopeChannel:
		return s.Channel != "" && r.Channel == s.Channel
	}
	return false
}
func (m *memLongTerm) Add(_ context.Context, recs ...memory.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range recs {
		m.n++
		if r.ID == "" {
			r.ID = "m" + string(rune('0'+m.n))
		}
		m.recs = append(m.recs, r)
	}
	return nil
}
func (m *memLongTerm) Search(_ context.Context, q memory.Query) ([]memory.Hit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memory.Hit
	for _, r := range m.recs {
		if m.visible(q.Scope, r) && r.Priority >= q.MinPriority {
			out = append(out, memory.Hit{Record: r, Score: 0.5})
		}
	}
	return out, nil
}
func (m *memLongTerm) List(_ context.Context, f memory.Filter, limit int) ([]memory.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memory.Record
	for _, r := range m.recs {
		if !m.visible(f.Scope, r) {
			continue
		}
		if len(f.Types) > 0 && r.Type != f.Types[0] {
			continue
		}
		if f.Fingerprint != "" && !contains(r.Fingerprints, f.Fingerprint) {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}
func (m *memLongTerm) Delete(context.Context, memory.Filter) (int, error) { return 0, nil }
func (m *memLongTerm) Cleanup(context.Context, time.Time, int, time.Duration, map[string]time.Duration) (int, error) {
	return 0, nil
}
func (m *memLongTerm) Ping(context.Context) error { return nil }
func (m *memLongTerm) Close() error               { return nil }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fakeSkill is a skill whose behaviour a test sets.
type fakeSkill struct {
	spec  skills.Spec
	mu    sync.Mutex
	calls []skills.Call
	run   func(c skills.Call) (skills.Result, error)
}

func (f *fakeSkill) Spec() skills.Spec { return f.spec }
func (f *fakeSkill) Run(_ context.Context, c skills.Call) (skills.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	if f.run == nil {
		return skills.Result{Status: skills.StatusOK, Output: f.spec.Name + " ok"}, nil
	}
	return f.run(c)
}
func (f *fakeSkill) Calls() []skills.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]skills.Call(nil), f.calls...)
}

func newFake(name string, params string, run func(c skills.Call) (skills.Result, error)) *fakeSkill {
	spec := skills.Spec{Name: name, Description: "The " + name + " skill."}
	if params != "" {
		if err := json.Unmarshal([]byte(params), &spec.Parameters); err != nil {
			panic(err)
		}
	}
	return &fakeSkill{spec: spec, run: run}
}

// fileArg reads the "file" argument, defaulting to the only attachment.
func fileArg(c skills.Call) (skills.File, bool) {
	var a struct {
		File string `json:"file"`
	}
	json.Unmarshal(c.Args, &a)
	return c.Env.FileByName(a.File)
}

// readLines returns the lines of a file (1-based index 0 unused).
func linesOf(path string) []string {
	b, _ := os.ReadFile(path)
	return append([]string{""}, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
}

const fileParams = `{"type":"object","properties":{"file":{"type":"string"},"line":{"type":"integer"},"pattern":{"type":"string"},"level":{"type":"string"},"context":{"type":"integer"},"max_lines":{"type":"integer"}}}`

// triageSkills are small stand-ins for the log skills: analyze-log cites
// the lines containing ERROR, read-log shows lines, query-issue-kb and
// generate-report summarise.
func triageSkills() (analyze, read, kb, report *fakeSkill) {
	analyze = newFake("analyze-log", `{"type":"object","properties":{"file":{"type":"string"}}}`, func(c skills.Call) (skills.Result, error) {
		f, ok := fileArg(c)
		if !ok {
			return skills.Errorf("no such file"), nil
		}
		var b strings.Builder
		res := skills.Result{Status: skills.StatusOK}
		for i, l := range linesOf(f.Path) {
			if strings.Contains(l, "ERROR") {
				b.WriteString(f.Name + ":" + itoa(i) + " " + l + "\n")
				res.Lines = append(res.Lines, skills.LineRef{File: f.Name, Line: i, Text: l})
			}
		}
		res.Output = "errors:\n" + b.String()
		res.Fingerprints = []string{"tmpl-" + f.Name}
		return res, nil
	})
	read = newFake("read-log", fileParams, func(c skills.Call) (skills.Result, error) {
		f, ok := fileArg(c)
		if !ok {
			return skills.Errorf("no such file"), nil
		}
		var a struct {
			Line    int    `json:"line"`
			Pattern string `json:"pattern"`
			Level   string `json:"level"`
		}
		json.Unmarshal(c.Args, &a)
		var b strings.Builder
		for i, l := range linesOf(f.Path) {
			if i == 0 {
				continue
			}
			show := (a.Line > 0 && i >= a.Line-2 && i <= a.Line+2) ||
				(a.Pattern != "" && strings.Contains(strings.ToLower(l), strings.ToLower(a.Pattern))) ||
				(a.Level == "error" && strings.Contains(l, "ERROR"))
			if show {
				b.WriteString("L" + itoa(i) + ": " + l + "\n")
			}
		}
		return skills.Result{Status: skills.StatusOK, Output: b.String()}, nil
	})
	kb = newFake("query-issue-kb", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`, func(c skills.Call) (skills.Result, error) {
		return skills.Result{Status: skills.StatusOK, Output: "kb: pool exhaustion — a long job holds every connection"}, nil
	})
	report = newFake("generate-report", `{"type":"object","properties":{"file":{"type":"string"}}}`, func(c skills.Call) (skills.Result, error) {
		f, _ := fileArg(c)
		lines := linesOf(f.Path)
		for i, l := range lines {
			if strings.Contains(l, "ERROR") {
				return skills.Result{Status: skills.StatusOK, Output: "**Conclusion:** the first error is at " + f.Name + ":" + itoa(i) + " \"" + l + "\"\n\nNext steps:\n- look at the job"}, nil
			}
		}
		return skills.Result{Status: skills.StatusOK, Output: "no errors found"}, nil
	})
	return
}

func itoa(i int) string { return strconv.Itoa(i) }

// harness wires an agent with fakes.
type harness struct {
	t        *testing.T
	agent    *Agent
	sessions *memSessions
	lt       *memLongTerm
	progress []string
	dir      string
}

func newHarness(t *testing.T, cfg Config, list ...skills.Skill) *harness {
	t.Helper()
	reg, err := skills.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, sessions: newMemSessions(t), dir: t.TempDir()}
	cfg.Registry = reg
	if cfg.Logger == nil {
		cfg.Logger = discard()
	}
	cfg.Sessions = h.sessions
	if cfg.AuditDir == "" {
		cfg.AuditDir = filepath.Join(h.dir, "audit")
	}
	if cfg.Memory == nil {
		h.lt = &memLongTerm{}
		cfg.Memory = h.lt
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	h.agent = a
	return h
}

// logFile writes a log into the test's directory and returns an attachment.
func (h *harness) logFile(name, content string) bot.Attachment {
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		h.t.Fatal(err)
	}
	return bot.Attachment{Name: name, Path: p}
}

func (h *harness) run(text string, atts ...bot.Attachment) bot.Reply {
	h.t.Helper()
	return h.runMsg(bot.Message{Platform: "local", Tenant: "t1", Channel: "c1", Thread: "th1", ID: "m" + itoa(len(h.progress)), User: "u1", Text: text, Attachments: atts})
}

func (h *harness) runMsg(m bot.Message) bot.Reply {
	h.t.Helper()
	rep, err := h.agent.Run(context.Background(), bot.Turn{Message: m, SessionKey: m.SessionKey(),
		Progress: func(s string) { h.progress = append(h.progress, s) }})
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return rep
}

// auditRecords reads every audit record written so far.
func (h *harness) auditRecords() []auditRecord {
	h.t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.dir, "audit", "*.jsonl"))
	var out []auditRecord
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			var r auditRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				h.t.Fatalf("audit line %q: %v", line, err)
			}
			out = append(out, r)
		}
	}
	return out
}

const paymentsLog = `2024-05-01 02:00:00 INFO  app started
2024-05-01 02:00:05 INFO  settlement export started, holding connections
2024-05-01 02:00:09 WARN  pool at 10/10
2024-05-01 02:00:10 ERROR Connection is not available, request timed out after 30000ms
2024-05-01 02:00:11 ERROR Connection is not available, request timed out after 30000ms
2024-05-01 02:00:12 INFO  retrying
`

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
