// Package builtin builds the list of sleuth's built-in log skills in one
// place, from their dependencies. The memory skills (search-memory,
// remember, forget) need the long-term store and are added by the caller.
package builtin

import (
	"errors"
	"fmt"
	"sort"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/analyzelog"
	"github.com/sleuth-bot/sleuth/skills/comparelogs"
	"github.com/sleuth-bot/sleuth/skills/generatereport"
	"github.com/sleuth-bot/sleuth/skills/querykb"
	"github.com/sleuth-bot/sleuth/skills/readlog"
	"github.com/sleuth-bot/sleuth/skills/writesnapshot"
)

// Config holds what the built-in skills depend on.
type Config struct {
	// Notes stores write-snapshot's working notes; required.
	// memory.Sessions satisfies it.
	Notes writesnapshot.Notes
	// KBDir is an operator's folder of extra knowledge-base entries
	// (SLEUTH_KB_DIR); optional. A missing folder is an error; a broken
	// file in it is logged and skipped.
	KBDir string
	// MaxBytes caps the decompressed bytes analyze-log reads per file;
	// 0 means the engine's default.
	MaxBytes int64
	// ReadLog tunes read-log's caps; the zero value uses its defaults.
	ReadLog readlog.Config
}

// Builtins returns the built-in skills sorted by name: analyze-log,
// compare-logs, generate-report, query-issue-kb, read-log, write-snapshot.
func Builtins(cfg Config) ([]skills.Skill, error) {
	if cfg.Notes == nil {
		return nil, writesnapshot.ErrNoNotes
	}
	var (
		list []skills.Skill
		errs []error
	)
	add := func(s skills.Skill, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		list = append(list, s)
	}
	add(analyzelog.New(analyzelog.Config{MaxBytes: cfg.MaxBytes}))
	add(comparelogs.New(comparelogs.Config{}))
	add(generatereport.New(generatereport.Config{}))
	add(querykb.New(querykb.Config{Dir: cfg.KBDir}))
	add(readlog.New(cfg.ReadLog))
	add(writesnapshot.New(writesnapshot.Config{Notes: cfg.Notes}))
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("built-in skills: %w", err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Spec().Name < list[j].Spec().Name })
	return list, nil
}
