package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/skills"
)

// cleanupArgs are memory-cleanup's arguments.
type cleanupArgs struct {
	// MaxPriority and OlderThan: long-term memories with priority <=
	// MaxPriority older than OlderThan are removed.
	MaxPriority int
	OlderThan   time.Duration
	// TTL per memory type: older records of that type are removed.
	TTL map[string]time.Duration
	// AttachmentDays: session workspaces untouched this long are deleted;
	// 0 keeps them.
	AttachmentDays int
	// HistoryDays: job run records older than this are deleted; 0 keeps
	// them.
	HistoryDays int
}

// decodeArgs turns YAML/JSON args into a struct through JSON.
func decodeArgs(args map[string]any, v any) error {
	if args == nil {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func parseCleanupArgs(args map[string]any) (cleanupArgs, error) {
	var raw struct {
		MaxPriority    *int              `json:"max_priority"`
		OlderThan      string            `json:"older_than"`
		TTL            map[string]string `json:"ttl"`
		AttachmentDays *int              `json:"attachment_days"`
		HistoryDays    *int              `json:"history_days"`
	}
	if err := decodeArgs(args, &raw); err != nil {
		return cleanupArgs{}, fmt.Errorf("memory-cleanup args: %w", err)
	}
	a := cleanupArgs{MaxPriority: 1, OlderThan: 24 * time.Hour, AttachmentDays: 14, HistoryDays: 90, TTL: map[string]time.Duration{}}
	var errs []error
	if raw.MaxPriority != nil {
		a.MaxPriority = *raw.MaxPriority
		if a.MaxPriority < 0 || a.MaxPriority > 5 {
			errs = append(errs, errors.New("max_priority must be 0–5"))
		}
	}
	if raw.OlderThan != "" {
		d, err := parseDays(raw.OlderThan)
		if err != nil {
			errs = append(errs, fmt.Errorf("older_than: %w", err))
		}
		a.OlderThan = d
	}
	for typ, v := range raw.TTL {
		d, err := parseDays(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("ttl.%s: %w", typ, err))
		}
		a.TTL[typ] = d
	}
	if raw.AttachmentDays != nil {
		a.AttachmentDays = *raw.AttachmentDays
	}
	if raw.HistoryDays != nil {
		a.HistoryDays = *raw.HistoryDays
	}
	if a.AttachmentDays < 0 || a.HistoryDays < 0 {
		errs = append(errs, errors.New("attachment_days and history_days must not be negative"))
	}
	return a, errors.Join(errs...)
}

// parseDays reads a Go duration or a number of days ("30d"); it must be
// positive.
func parseDays(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration like 24h or 30d", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration like 24h or 30d", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be positive", s)
	}
	return d, nil
}

// yield waits while interactive work is in progress, up to BusyMaxWait.
func (s *Scheduler) yield(ctx context.Context) error {
	if s.cfg.Busy == nil {
		return nil
	}
	for waited := time.Duration(0); s.cfg.Busy() && waited < s.cfg.BusyMaxWait; waited += s.cfg.BusyPoll {
		if err := s.cfg.Sleep(ctx, s.cfg.BusyPoll); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// cleanup is the memory-cleanup kind: long-term memories (low priority and
// old, or past their type's TTL), session workspaces untouched for
// AttachmentDays, and old run records. It yields to interactive work
// before each step and between workspaces.
func (s *Scheduler) cleanup(ctx context.Context, j *job) (*output, error) {
	a, err := parseCleanupArgs(j.def.Args)
	if err != nil {
		return nil, permanent{err}
	}
	now := s.clock.Now()
	var parts []string
	if s.cfg.LongTerm != nil {
		if err := s.yield(ctx); err != nil {
			return nil, err
		}
		n, err := s.cfg.LongTerm.Cleanup(ctx, now, a.MaxPriority, a.OlderThan, a.TTL)
		if err != nil {
			return nil, fmt.Errorf("memory cleanup: %w", err)
		}
		parts = append(parts, fmt.Sprintf("%d memories", n))
	}
	if s.cfg.DataDir != "" && a.AttachmentDays > 0 {
		n, bytes, err := s.expireWorkspaces(ctx, now.Add(-time.Duration(a.AttachmentDays)*24*time.Hour))
		if err != nil {
			return nil, err
		}
		parts = append(parts, fmt.Sprintf("%d session workspaces (%s)", n, skills.HumanBytes(bytes)))
	}
	if a.HistoryDays > 0 {
		if err := s.yield(ctx); err != nil {
			return nil, err
		}
		n, err := s.st.prune(ctx, now.Add(-time.Duration(a.HistoryDays)*24*time.Hour))
		if err != nil {
			return nil, err
		}
		parts = append(parts, fmt.Sprintf("%d job run records", n))
	}
	summary := "memory cleanup removed " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		summary = "memory cleanup: nothing configured to clean"
	}
	return &output{reply: bot.Reply{Text: summary}, summary: summary}, nil
}

// expireWorkspaces deletes DataDir/sessions/<id>/ folders whose newest
// entry is older than cut. Symbolic links are never followed.
func (s *Scheduler) expireWorkspaces(ctx context.Context, cut time.Time) (int, int64, error) {
	root := filepath.Join(s.cfg.DataDir, "sessions")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("attachment retention: %w", err)
	}
	n, total := 0, int64(0)
	for _, e := range entries {
		if !e.IsDir() { // symlinks and files are not session workspaces
			continue
		}
		dir := filepath.Join(root, e.Name())
		newest, size, err := newestIn(dir)
		if err != nil {
			s.log.Warn("attachment retention: skip workspace", "dir", e.Name(), "error", err)
			continue
		}
		if !newest.Before(cut) {
			continue
		}
		if err := s.yield(ctx); err != nil {
			return n, total, err
		}
		if err := os.RemoveAll(dir); err != nil {
			s.log.Warn("attachment retention: remove workspace", "dir", e.Name(), "error", err)
			continue
		}
		n++
		total += size
	}
	return n, total, nil
}

// newestIn returns the latest modification time and total size in dir.
func newestIn(dir string) (time.Time, int64, error) {
	var newest time.Time
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		if fi.Mode().IsRegular() {
			size += fi.Size()
		}
		return nil
	})
	return newest, size, err
}
