// Package analyzelog is the analyze-log skill: the log engine's summary and
// ranked evidence for one attachment, cached per file content.
package analyzelog

import (
	"container/list"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

//go:embed SKILL.md
var skillMD []byte

// Defaults of Config.
const (
	DefaultCacheEntries = 64
	DefaultTop          = 10
	// analysisTop is how many evidence lines are kept in the cached
	// report; a call shows the top it asks for (the schema's maximum).
	analysisTop = 50
	// cacheDir is the folder in the session workspace holding reports.
	cacheDir = ".analysis"
	// maxTextChars cuts lines and templates in the output.
	maxTextChars = 300
	// maxTemplates is how many templates the output lists.
	maxTemplates = 8
)

// Analyzer runs the log engine (logscan.Analyze's shape).
type Analyzer = engine.Analyzer

// AnalyzeFunc adapts a function to Analyzer.
type AnalyzeFunc = engine.AnalyzeFunc

// Config configures the skill. The zero value is usable.
type Config struct {
	// Analyzer runs the engine; nil means logscan.Analyze.
	Analyzer Analyzer
	// CacheEntries bounds the reports kept in memory (LRU); 0 means
	// DefaultCacheEntries.
	CacheEntries int
	// MaxBytes caps the decompressed bytes read per file; 0 means the
	// engine's default.
	MaxBytes int64
}

// Skill is analyze-log. Reports are cached by file content (SHA-256 and
// size): in memory, and as JSON in the session workspace so they survive
// restarts. A repeated call on an unchanged file neither re-reads nor
// re-hashes it. Safe for concurrent use; concurrent calls for one file run
// the engine once.
type Skill struct {
	cfg  Config
	spec skills.Spec

	mu      sync.Mutex
	lru     *list.List               // of *entry, most recent first
	byKey   map[string]*list.Element // content key → element
	hashes  map[statKey]string       // file identity → content key
	flights singleflight.Group
}

type entry struct {
	key    string
	report *logscan.Report
}

// statKey identifies a file version cheaply (no reading).
type statKey struct {
	path  string
	size  int64
	mtime int64
}

// New returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("analyze-log SKILL.md: %w", err)
	}
	if cfg.CacheEntries < 0 || cfg.MaxBytes < 0 {
		return nil, errors.New("analyze-log: CacheEntries and MaxBytes must not be negative")
	}
	if cfg.Analyzer == nil {
		cfg.Analyzer = AnalyzeFunc(logscan.Analyze)
	}
	if cfg.CacheEntries == 0 {
		cfg.CacheEntries = DefaultCacheEntries
	}
	return &Skill{cfg: cfg, spec: spec, lru: list.New(), byKey: map[string]*list.Element{}, hashes: map[statKey]string{}}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

type args struct {
	File string `json:"file"`
	Top  int    `json:"top"`
}

// Run analyses the file. Unreadable input (empty, binary, too large, a zip
// bomb) is an error result the model can relay.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	start := time.Now()
	var a args
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &a); !ok {
		return r, nil
	}
	if a.Top <= 0 {
		a.Top = DefaultTop
	}
	a.Top = min(a.Top, analysisTop)
	f, ok := c.Env.FileByName(a.File)
	if !ok {
		return skills.UnknownFile(c.Env, a.File), nil
	}
	rep, cached, err := s.report(ctx, f, c.Env.Workspace)
	if err != nil {
		if r, ok := engine.InputError("analyse", f.Name, err); ok {
			return r, nil
		}
		return skills.Result{}, fmt.Errorf("analyze-log %s: %w", f.Name, err)
	}
	res := Render(f.Name, rep, a.Top)
	res.Metadata = map[string]any{
		"file": f.Name, "cached": cached, "duration_ms": time.Since(start).Milliseconds(),
		"lines": rep.Lines, "bytes": rep.Bytes, "engine_ms": rep.DurationMS,
	}
	return res, nil
}

// Report returns the engine's report for f, from the cache when the
// content was analysed before. Callers must not modify it.
func (s *Skill) Report(ctx context.Context, f skills.File, workspace string) (*logscan.Report, error) {
	r, _, err := s.report(ctx, f, workspace)
	return r, err
}

func (s *Skill) report(ctx context.Context, f skills.File, workspace string) (*logscan.Report, bool, error) {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return nil, false, fmt.Errorf("stat: %w", err)
	}
	sk := statKey{path: f.Path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	s.mu.Lock()
	key, known := s.hashes[sk]
	if known {
		if el, ok := s.byKey[key]; ok {
			s.lru.MoveToFront(el)
			rep := el.Value.(*entry).report
			s.mu.Unlock()
			return rep, true, nil
		}
	}
	s.mu.Unlock()
	if !known {
		key = contentKey(f.SHA256, fi.Size())
		if key == "" {
			if key, err = hashFile(ctx, f.Path, fi.Size()); err != nil {
				return nil, false, err
			}
		}
		s.mu.Lock()
		s.hashes[sk] = key
		s.mu.Unlock()
	}
	type out struct {
		rep    *logscan.Report
		cached bool
	}
	v, err, _ := s.flights.Do(key, func() (any, error) {
		if rep := loadDisk(workspace, key); rep != nil {
			s.put(key, rep)
			return out{rep, true}, nil
		}
		rep, err := s.cfg.Analyzer.Analyze(ctx, []string{f.Path}, logscan.Options{Top: analysisTop, MaxBytes: s.cfg.MaxBytes})
		if err != nil {
			return nil, err
		}
		s.put(key, rep)
		saveDisk(workspace, key, rep)
		return out{rep, false}, nil
	})
	if err != nil {
		return nil, false, err
	}
	o := v.(out)
	return o.rep, o.cached, nil
}

func (s *Skill) put(key string, rep *logscan.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		s.lru.MoveToFront(el)
		return
	}
	s.byKey[key] = s.lru.PushFront(&entry{key: key, report: rep})
	for s.lru.Len() > s.cfg.CacheEntries {
		old := s.lru.Back()
		s.lru.Remove(old)
		delete(s.byKey, old.Value.(*entry).key)
	}
}

func contentKey(sha string, size int64) string {
	if len(sha) != sha256.Size*2 {
		return ""
	}
	return fmt.Sprintf("%s-%d", strings.ToLower(sha), size)
}

func hashFile(ctx context.Context, path string, size int64) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, fh}); err != nil {
		return "", fmt.Errorf("hash: %w", err)
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), size), nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func loadDisk(workspace, key string) *logscan.Report {
	if workspace == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(workspace, cacheDir, key+".json"))
	if err != nil {
		return nil
	}
	var rep logscan.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		slog.Warn("analyze-log: ignoring a corrupt cached report", "key", key, "error", err)
		return nil
	}
	return &rep
}

func saveDisk(workspace, key string, rep *logscan.Report) {
	if workspace == "" {
		return
	}
	dir := filepath.Join(workspace, cacheDir)
	b, err := json.Marshal(rep)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		tmp := filepath.Join(dir, key+".json.tmp")
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, filepath.Join(dir, key+".json"))
		}
	}
	if err != nil {
		slog.Warn("analyze-log: cannot cache the report", "error", err)
	}
}
