// Package logscan is the log engine the log skills share: a streaming reader
// (plain, gzip, zip, tar.gz; CRLF; invalid UTF-8; huge lines), per-file
// header detection, multi-line event grouping, template mining with stable
// template ids, evidence ranking and baseline comparison.
//
// Line numbers are 1-based and count '\n' only (as grep -n does).
//
// THIS FILE IS THE CONTRACT other packages code against. The engine's owner
// may add fields and functions, but must not rename or remove these.
package logscan

import (
	"context"
	"errors"
)

// Input errors; each message is fit to show a person.
var (
	ErrEmpty     = errors.New("the file is empty")
	ErrBinary    = errors.New("the file looks binary, not a text log")
	ErrTooLarge  = errors.New("the file is too large")
	ErrBomb      = errors.New("the archive expands too much (possible zip bomb)")
	ErrCorrupt   = errors.New("the archive is corrupted")
	ErrNotFile   = errors.New("not a regular file")
	ErrNoTextLog = errors.New("the archive holds no text log")
)

// Options tune an analysis. The zero value is usable.
type Options struct {
	Top          int    // evidence lines to return, default 10
	MaxLineBytes int    // longer lines are cut with a marker; default 64 KiB
	Baseline     string // path of a log of a good run; "" for none
	// MaxBytes caps the decompressed bytes read per file; default 4 GiB.
	MaxBytes int64
	// MaxRatio caps an archive's expansion (decompressed / compressed bytes)
	// once it has produced 64 MiB; default 200.
	MaxRatio float64
}

// TimeRange is the span of timestamps found.
type TimeRange struct {
	Start     string `json:"start"`
	End       string `json:"end"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// TemplateStat is one mined template.
type TemplateStat struct {
	ID        string `json:"id"`
	Template  string `json:"template"`
	Count     int64  `json:"count"`
	Level     string `json:"level"` // highest level seen: error, warn, info, debug, ""
	FirstLine int    `json:"first_line"`
	File      string `json:"file,omitempty"`
}

// Evidence is one ranked line.
type Evidence struct {
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Text       string  `json:"text"`
	Reason     string  `json:"reason"`
	Score      float64 `json:"score"`
	TemplateID string  `json:"template_id,omitempty"`
}

// LineRef points at one line.
type LineRef struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Burst is a window with an unusual rate of errors.
type Burst struct {
	Start     string  `json:"start"`
	End       string  `json:"end"`
	StartLine int     `json:"start_line"`
	EndLine   int     `json:"end_line"`
	Errors    int     `json:"errors"`
	PerMinute float64 `json:"per_minute"`
	File      string  `json:"file,omitempty"` // set when several files were analysed

	startMS, endMS int64 // the times of its first and last errors
}

// Change is one template's change against a baseline.
type Change struct {
	ID        string `json:"id"`
	Template  string `json:"template"`
	Before    int64  `json:"before"`
	After     int64  `json:"after"`
	FirstLine int    `json:"first_line,omitempty"` // in the failing log
}

// Diff compares a log with a baseline by template.
type Diff struct {
	Baseline string   `json:"baseline"`
	New      []Change `json:"new"`
	Vanished []Change `json:"vanished"`
	Rising   []Change `json:"rising"`
	Falling  []Change `json:"falling"`
	// Divergence is where the failing run left the baseline's order of
	// events, or where it stopped short.
	Divergence *LineRef `json:"divergence,omitempty"`
}

// Report is the result of an analysis; its JSON shape is the contract of
// `sleuth analyze --json`.
type Report struct {
	Files      []string         `json:"files"`
	Lines      int64            `json:"lines"`
	Bytes      int64            `json:"bytes"`
	TimeRange  *TimeRange       `json:"time_range"`
	Levels     map[string]int64 `json:"levels"`
	Templates  []TemplateStat   `json:"templates"` // most frequent first, capped
	Evidence   []Evidence       `json:"evidence"`  // best first
	FirstError *LineRef         `json:"first_error"`
	Bursts     []Burst          `json:"bursts"`
	DurationMS int64            `json:"duration_ms"`
	Diff       *Diff            `json:"diff,omitempty"`
	// ErrorTemplates lists the ids of templates at error level or above
	// (the fingerprints memory remembers).
	ErrorTemplates []string `json:"error_templates"`
}

// TemplateLine is one physical input line with its template.
type TemplateLine struct {
	Line       int    `json:"line"`
	TemplateID string `json:"template_id"`
	Template   string `json:"template"`
}

// Analyze reads the files (streaming, bounded memory) and returns the
// report. Input problems return one of the Err values above, wrapped with
// the file name.
func Analyze(ctx context.Context, paths []string, opt Options) (*Report, error) {
	return analyze(ctx, paths, opt)
}

// Templates calls fn for every physical line of path, in order.
func Templates(ctx context.Context, path string, opt Options, fn func(TemplateLine) error) error {
	return templates(ctx, path, opt, fn)
}

// Scan calls fn for every physical line of path (decompressed, CRLF
// stripped, invalid UTF-8 replaced, long lines cut), with its 1-based line
// number. fn may return ErrStop to end early without error.
func Scan(ctx context.Context, path string, opt Options, fn func(line int, text string) error) error {
	return scan(ctx, path, opt, fn)
}

// ErrStop ends a Scan early.
var ErrStop = errors.New("stop scan")

// TemplateOf returns the template id and text of a single message line,
// as the miner would mask it without file context. Useful for matching
// knowledge-base patterns and memories.
func TemplateOf(line string) (id, template string) { return templateOf(line) }
