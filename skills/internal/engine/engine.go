// Package engine holds what the built-in log skills share about the log
// engine: the shapes of its Scan and Analyze functions as small
// interfaces, the translation of its input errors into results the model
// can relay, and text cutting.
package engine

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// Scanner streams the lines of a file (logscan.Scan's shape).
type Scanner interface {
	Scan(ctx context.Context, path string, opt logscan.Options, fn func(line int, text string) error) error
}

// ScanFunc adapts a function to Scanner.
type ScanFunc func(ctx context.Context, path string, opt logscan.Options, fn func(line int, text string) error) error

// Scan calls f.
func (f ScanFunc) Scan(ctx context.Context, path string, opt logscan.Options, fn func(int, string) error) error {
	return f(ctx, path, opt, fn)
}

// Analyzer runs the log engine (logscan.Analyze's shape).
type Analyzer interface {
	Analyze(ctx context.Context, paths []string, opt logscan.Options) (*logscan.Report, error)
}

// AnalyzeFunc adapts a function to Analyzer.
type AnalyzeFunc func(ctx context.Context, paths []string, opt logscan.Options) (*logscan.Report, error)

// Analyze calls f.
func (f AnalyzeFunc) Analyze(ctx context.Context, paths []string, opt logscan.Options) (*logscan.Report, error) {
	return f(ctx, paths, opt)
}

// inputErrors are the engine's errors about the input itself.
var inputErrors = []error{logscan.ErrEmpty, logscan.ErrBinary, logscan.ErrTooLarge, logscan.ErrBomb, logscan.ErrCorrupt, logscan.ErrNotFile, logscan.ErrNoTextLog}

// InputError turns the engine's input errors (empty, binary, too large,
// corrupt …) into an error result: "cannot <verb> <name>: <why>". ok is
// false for other errors, which are infrastructure failures.
func InputError(verb, name string, err error) (r skills.Result, ok bool) {
	for _, e := range inputErrors {
		if errors.Is(err, e) {
			return skills.Errorf("cannot %s %s: %v; tell the user and ask for a text log", verb, name, e), true
		}
	}
	return skills.Result{}, false
}

// Cut shortens s to max characters, noting how many were cut.
func Cut(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	return string([]rune(s)[:max]) + fmt.Sprintf("…[+%d chars]", n-max)
}
