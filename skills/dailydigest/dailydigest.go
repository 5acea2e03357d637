// Package dailydigest is the daily-digest skill: a digest of one channel's
// recent activity (threads, analyses, recurring error signatures and their
// trend, signatures seen for the first time, threads still open), built
// from the session store. The scheduler posts it every morning; people can
// ask for it in a channel.
package dailydigest

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

//go:embed SKILL.md
var skillMD []byte

// Name is the skill's name.
const Name = "daily-digest"

// Limits and defaults.
const (
	DefaultWindow = 24 * time.Hour
	// MaxWindow bounds a digest's window: the store is read twice the
	// window back (the trend compares with the window before).
	MaxWindow = 7 * 24 * time.Hour
	// DefaultNewLookback is how far back "seen for the first time" looks.
	DefaultNewLookback = 30 * 24 * time.Hour
	// maxListed caps the signatures and open threads listed; the counts
	// cover all of them.
	maxListed = 10
	// maxNarrative caps the model's narrative (runes).
	maxNarrative = 1200
	// maxQuestion caps a quoted open question (runes).
	maxQuestion = 120
)

// SessionReader is what the digest reads from the session store
// (memory.Sessions implements it).
type SessionReader interface {
	ListSessions(ctx context.Context, platform, tenant, channel string, from, to time.Time) ([]memory.Session, error)
	Turns(ctx context.Context, key string, limit int) ([]memory.Turn, error)
}

// MemoryLister labels signatures with remembered incidents
// (memory.LongTerm implements it).
type MemoryLister interface {
	List(ctx context.Context, f memory.Filter, limit int) ([]memory.Record, error)
}

// Narrator writes a short narrative on top of a structured digest, with a
// model. It is never called for a quiet window.
type Narrator interface {
	Narrate(ctx context.Context, digest string) (string, error)
}

// NarratorFunc adapts a function to Narrator.
type NarratorFunc func(ctx context.Context, digest string) (string, error)

// Narrate calls f.
func (f NarratorFunc) Narrate(ctx context.Context, digest string) (string, error) {
	return f(ctx, digest)
}

// Config configures the skill.
type Config struct {
	// Sessions is the session store. Required.
	Sessions SessionReader
	// Memories labels signatures with incident memories of the channel.
	// Optional; nil shows bare fingerprints.
	Memories MemoryLister
	// Narrator adds a model-written narrative. Optional; nil gives the
	// structured digest only.
	Narrator Narrator
	// Now is the clock. Optional; nil means time.Now.
	Now func() time.Time
	// NewLookback is how far back "first seen" looks. Optional; zero means
	// DefaultNewLookback.
	NewLookback time.Duration
	// Logger is optional; nil means slog.Default().
	Logger *slog.Logger
}

// Skill is daily-digest. Safe for concurrent use.
type Skill struct {
	cfg  Config
	spec skills.Spec
	log  *slog.Logger
}

// New validates cfg and returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("daily-digest SKILL.md: %w", err)
	}
	if cfg.Sessions == nil {
		return nil, errors.New("daily-digest: Sessions is required")
	}
	if cfg.NewLookback < 0 {
		return nil, errors.New("daily-digest: NewLookback must not be negative")
	}
	if cfg.NewLookback == 0 {
		cfg.NewLookback = DefaultNewLookback
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Skill{cfg: cfg, spec: spec, log: log}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

type args struct {
	Window string `json:"window"`
}

// Run builds the digest of the call's channel. A DM or a bad window is an
// error result with a hint. The Narrator is called only when something
// happened in the window.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if len(c.Args) > 0 && string(c.Args) != "null" {
		if err := json.Unmarshal(c.Args, &a); err != nil {
			return skills.Errorf("arguments must be an object like {\"window\": \"24h\"}: %v", err), nil
		}
	}
	window := DefaultWindow
	if strings.TrimSpace(a.Window) != "" {
		w, err := ParseWindow(a.Window)
		if err != nil {
			return skills.Errorf("%v", err), nil
		}
		window = w
	}
	if c.Env.DM || c.Env.Channel == "" {
		return skills.Errorf("a digest is about a channel; this conversation is a DM. Ask in the channel you want summarised"), nil
	}
	d, err := s.Build(ctx, c.Env.Platform, c.Env.Tenant, c.Env.Channel, window)
	if err != nil {
		return skills.Result{}, err
	}
	text := d.Text()
	narrated := false
	if !d.Quiet() && s.cfg.Narrator != nil {
		n, err := s.cfg.Narrator.Narrate(ctx, text)
		switch {
		case err != nil:
			// The structured digest stands on its own.
			s.log.Warn("digest narrative failed; posting the structured digest", "channel", c.Env.Channel, "error", err)
		case strings.TrimSpace(n) != "":
			text = truncate(strings.TrimSpace(n), maxNarrative) + "\n\n" + text
			narrated = true
		}
	}
	fps := make([]string, len(d.Signatures))
	for i, sg := range d.Signatures {
		fps[i] = sg.ID
	}
	return skills.Result{
		Status:       skills.StatusOK,
		Output:       text,
		Fingerprints: fps,
		Metadata: map[string]any{
			"quiet":          d.Quiet(),
			"narrated":       narrated,
			"threads":        d.Threads,
			"analyses":       d.Analyses,
			"failed_runs":    d.FailedRuns,
			"signatures":     len(d.Signatures),
			"new_signatures": len(d.New),
			"open_threads":   len(d.Open),
			"window":         window.String(),
		},
	}, nil
}

// ParseWindow reads "24h", "90m", "7d" or a bare number of hours; the
// result is within (0, MaxWindow].
func ParseWindow(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	var err error
	switch {
	case strings.HasSuffix(s, "d"):
		var n float64
		n, err = strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		d = time.Duration(n * float64(24*time.Hour))
	default:
		if n, perr := strconv.ParseFloat(s, 64); perr == nil {
			d = time.Duration(n * float64(time.Hour))
		} else {
			d, err = time.ParseDuration(s)
		}
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("window %q is not a duration; use e.g. \"24h\" or \"7d\"", s)
	}
	if d > MaxWindow {
		return 0, fmt.Errorf("window %q is longer than the 7 days a digest covers; use \"7d\" or less", s)
	}
	return d, nil
}

// Digest is one channel's activity over [From, To).
type Digest struct {
	Platform, Tenant, Channel string
	From, To                  time.Time
	// Threads is the number of threads with a question in the window.
	Threads int
	// Questions and Analyses count user turns and answered assistant turns.
	Questions, Analyses int
	// FailedRuns counts assistant turns that failed.
	FailedRuns int
	// Signatures are the error fingerprints of the window, most threads
	// first; New are those not seen in the lookback before the window.
	Signatures []Signature
	New        []Signature
	// Open are threads whose last question is unanswered or whose last run
	// failed, most recent first.
	Open []OpenThread
}

// Signature is one error-template fingerprint.
type Signature struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"` // from a remembered incident
	// Threads is the number of threads it appeared in during the window;
	// Previous the number in the window before.
	Threads  int    `json:"threads"`
	Previous int    `json:"previous"`
	Trend    string `json:"trend"` // new, rising, falling, steady
	Link     string `json:"link,omitempty"`
}

// OpenThread is a thread that still needs attention.
type OpenThread struct {
	Key      string    `json:"key"`
	Link     string    `json:"link,omitempty"`
	Reason   string    `json:"reason"` // "unanswered" | "failed"
	Question string    `json:"question,omitempty"`
	Updated  time.Time `json:"updated"`
}

// Trends.
const (
	TrendNew     = "new"
	TrendRising  = "rising"
	TrendFalling = "falling"
	TrendSteady  = "steady"
)

// Quiet reports a window in which nothing happened.
func (d Digest) Quiet() bool {
	return d.Threads == 0 && d.Analyses == 0 && d.FailedRuns == 0 && len(d.Signatures) == 0 && len(d.Open) == 0
}

// Build reads the store and computes the digest of a channel for the
// window ending now.
func (s *Skill) Build(ctx context.Context, platform, tenant, channel string, window time.Duration) (Digest, error) {
	if window <= 0 || window > MaxWindow {
		return Digest{}, fmt.Errorf("daily-digest: window %s out of range", window)
	}
	to := s.cfg.Now().UTC()
	from := to.Add(-window)
	prevFrom := from.Add(-window)
	lookFrom := from.Add(-s.cfg.NewLookback)
	if prevFrom.Before(lookFrom) {
		lookFrom = prevFrom
	}
	d := Digest{Platform: platform, Tenant: tenant, Channel: channel, From: from, To: to}

	sessions, err := s.cfg.Sessions.ListSessions(ctx, platform, tenant, channel, lookFrom, to)
	if err != nil {
		return Digest{}, fmt.Errorf("daily-digest: list sessions: %w", err)
	}
	type sig struct {
		cur, prev map[string]bool // session keys
		before    bool            // seen in the lookback before the window
		link      string
		last      time.Time
	}
	sigs := map[string]*sig{}
	get := func(id string) *sig {
		g := sigs[id]
		if g == nil {
			g = &sig{cur: map[string]bool{}, prev: map[string]bool{}}
			sigs[id] = g
		}
		return g
	}
	for _, ss := range sessions {
		turns, err := s.cfg.Sessions.Turns(ctx, ss.Key, 0)
		if err != nil {
			return Digest{}, fmt.Errorf("daily-digest: turns of a session: %w", err)
		}
		if !hasQuestion(turns) {
			// Threads sleuth started itself (digests, reports) count only
			// once someone asks something in them; their own fingerprints
			// would otherwise count the digest in the next digest.
			continue
		}
		var inWindow []memory.Turn
		for _, t := range turns {
			at := t.CreatedAt
			switch {
			case !at.Before(from) && at.Before(to):
				inWindow = append(inWindow, t)
				for _, fp := range t.Fingerprints {
					g := get(fp)
					g.cur[ss.Key] = true
					if at.After(g.last) {
						g.last, g.link = at, linkOf(ss)
					}
				}
			case !at.Before(prevFrom) && at.Before(from):
				for _, fp := range t.Fingerprints {
					g := get(fp)
					g.prev[ss.Key] = true
					g.before = true
				}
			case !at.Before(lookFrom) && at.Before(from):
				for _, fp := range t.Fingerprints {
					get(fp).before = true
				}
			}
		}
		questions := 0
		for _, t := range inWindow {
			switch t.Role {
			case "user":
				questions++
			case "assistant":
				if t.Failed {
					d.FailedRuns++
				} else {
					d.Analyses++
				}
			}
		}
		if questions == 0 {
			continue
		}
		d.Threads++
		d.Questions += questions
		if ot, open := openThread(ss, turns); open {
			d.Open = append(d.Open, ot)
		}
	}
	for id, g := range sigs {
		if len(g.cur) == 0 {
			continue
		}
		sg := Signature{ID: id, Threads: len(g.cur), Previous: len(g.prev), Link: g.link}
		switch {
		case !g.before:
			sg.Trend = TrendNew
		case sg.Threads > sg.Previous:
			sg.Trend = TrendRising
		case sg.Threads < sg.Previous:
			sg.Trend = TrendFalling
		default:
			sg.Trend = TrendSteady
		}
		sg.Label = s.label(ctx, tenant, channel, id)
		d.Signatures = append(d.Signatures, sg)
		if sg.Trend == TrendNew {
			d.New = append(d.New, sg)
		}
	}
	bySize := func(l []Signature) {
		sort.Slice(l, func(i, j int) bool {
			if l[i].Threads != l[j].Threads {
				return l[i].Threads > l[j].Threads
			}
			return l[i].ID < l[j].ID
		})
	}
	bySize(d.Signatures)
	bySize(d.New)
	sort.Slice(d.Open, func(i, j int) bool { return d.Open[i].Updated.After(d.Open[j].Updated) })
	return d, nil
}

func hasQuestion(turns []memory.Turn) bool {
	for _, t := range turns {
		if t.Role == "user" {
			return true
		}
	}
	return false
}

// openThread reports whether a thread still needs attention: its last
// user question has no assistant answer after it, or its last run failed.
func openThread(ss memory.Session, turns []memory.Turn) (OpenThread, bool) {
	ot := OpenThread{Key: ss.Key, Link: linkOf(ss), Updated: ss.UpdatedAt}
	var last *memory.Turn
	lastQ := ""
	for i := range turns {
		t := &turns[i]
		if t.Role == "user" || t.Role == "assistant" {
			last = t
		}
		if t.Role == "user" {
			lastQ = t.Content
		}
	}
	ot.Question = truncate(oneLine(lastQ), maxQuestion)
	switch {
	case ss.Status == memory.StatusFailed, last != nil && last.Role == "assistant" && last.Failed:
		ot.Reason = "failed"
	case last != nil && last.Role == "user":
		ot.Reason = "unanswered"
	default:
		return OpenThread{}, false
	}
	return ot, true
}

func (s *Skill) label(ctx context.Context, tenant, channel, id string) string {
	if s.cfg.Memories == nil || tenant == "" {
		return ""
	}
	recs, err := s.cfg.Memories.List(ctx, memory.Filter{
		Scope:       memory.Scope{Tenant: tenant, Channel: channel},
		Types:       []string{memory.TypeIncident},
		Fingerprint: id,
	}, 1)
	if err != nil {
		s.log.Debug("digest: incident label", "error", err)
		return ""
	}
	if len(recs) == 0 {
		return ""
	}
	return truncate(oneLine(recs[0].Content), maxQuestion)
}

// Text renders the digest as light markdown (the structured digest).
func (d Digest) Text() string {
	var b strings.Builder
	span := fmt.Sprintf("%s – %s UTC", d.From.UTC().Format("Jan 2 15:04"), d.To.UTC().Format("Jan 2 15:04"))
	if d.Quiet() {
		fmt.Fprintf(&b, "**Digest for %s** (%s): quiet — no questions, analyses or errors in this window.", d.Channel, span)
		return b.String()
	}
	fmt.Fprintf(&b, "**Digest for %s** (%s)\n", d.Channel, span)
	fmt.Fprintf(&b, "- %s, %s asked, %s, %s\n",
		plural(d.Threads, "thread", "threads"), plural(d.Questions, "question", "questions"),
		plural(d.Analyses, "answer", "answers"), plural(d.FailedRuns, "failed run", "failed runs"))
	if len(d.Signatures) > 0 {
		fmt.Fprintf(&b, "\n**Error signatures** (%d)\n", len(d.Signatures))
		for i, sg := range d.Signatures {
			if i == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(d.Signatures)-maxListed)
				break
			}
			fmt.Fprintf(&b, "- `%s`%s: %s (previous window %d, %s)%s\n",
				sg.ID, labelOf(sg), plural(sg.Threads, "thread", "threads"), sg.Previous, sg.Trend, linkSuffix(sg.Link))
		}
	}
	if len(d.New) > 0 {
		fmt.Fprintf(&b, "\n**First seen** (%d)\n", len(d.New))
		for i, sg := range d.New {
			if i == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(d.New)-maxListed)
				break
			}
			fmt.Fprintf(&b, "- `%s`%s%s\n", sg.ID, labelOf(sg), linkSuffix(sg.Link))
		}
	}
	if len(d.Open) > 0 {
		fmt.Fprintf(&b, "\n**Still open** (%d)\n", len(d.Open))
		for i, ot := range d.Open {
			if i == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(d.Open)-maxListed)
				break
			}
			q := ""
			if ot.Question != "" {
				q = fmt.Sprintf(": %q", ot.Question)
			}
			where := ot.Link
			if where == "" {
				where = ot.Key
			}
			fmt.Fprintf(&b, "- %s%s — %s\n", ot.Reason, q, where)
		}
	} else {
		b.WriteString("\nNo open threads.\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func labelOf(sg Signature) string {
	if sg.Label == "" {
		return ""
	}
	return " " + sg.Label
}

func linkSuffix(link string) string {
	if link == "" {
		return ""
	}
	return " — " + link
}

func linkOf(ss memory.Session) string { return ss.Link }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
