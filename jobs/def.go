package jobs

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/sleuth-bot/sleuth/bot"
)

// Job kinds run by the scheduler itself; any other Skill names a skill of
// the registry (daily-digest, …).
const (
	// KindLogReport analyses the new lines of operator-allowed log files.
	KindLogReport = "log-report"
	// KindMemoryCleanup prunes long-term memories, old session workspaces
	// and old run records, at low priority.
	KindMemoryCleanup = "memory-cleanup"
)

// Errors.
var (
	// ErrInvalidDef reports a job definition that cannot run; the message
	// names the job and the reason.
	ErrInvalidDef = errors.New("invalid job definition")
	// ErrUnknownJob reports a job name that is not defined.
	ErrUnknownJob = errors.New("no such job")
	// ErrClaimed reports an occurrence another scheduler (a second replica,
	// or an earlier start) already claimed.
	ErrClaimed = errors.New("run already claimed")
	// ErrOverlap reports a run refused because the job's previous run is
	// still going.
	ErrOverlap = errors.New("previous run of this job is still running")
	// ErrNotDelivered reports a post the platform did not confirm with a
	// message id.
	ErrNotDelivered = errors.New("platform returned no message id")
)

// Def is one job definition, as written in SLEUTH_JOBS_FILE:
//
//	jobs:
//	  - name: morning-digest
//	    schedule: "0 9 * * 1-5"     # 5-field cron, @daily, @every 1h
//	    timezone: Europe/Berlin     # or CRON_TZ=… in front of the schedule
//	    skill: daily-digest         # a skill, log-report or memory-cleanup
//	    args: {window: 24h}
//	    target: slack:C123          # slack:C…, feishu:oc_…, local[:CHANNEL]
//	    enabled: true               # default true
//	    skip_empty: false           # true: post nothing on a quiet run
type Def struct {
	Name     string         `yaml:"name" json:"name"`
	Schedule string         `yaml:"schedule" json:"schedule"`
	Timezone string         `yaml:"timezone,omitempty" json:"timezone,omitempty"`
	Skill    string         `yaml:"skill" json:"skill"`
	Args     map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
	Target   string         `yaml:"target,omitempty" json:"target,omitempty"`
	Enabled  *bool          `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// SkipEmpty posts nothing when the run found nothing (a quiet digest,
	// no new log lines); the run is recorded as skipped.
	SkipEmpty bool `yaml:"skip_empty,omitempty" json:"skip_empty,omitempty"`
	// Builtin marks sleuth's own defaults.
	Builtin bool `yaml:"-" json:"builtin,omitempty"`
}

// IsEnabled reports whether the job is scheduled (default true).
func (d Def) IsEnabled() bool { return d.Enabled == nil || *d.Enabled }

// Target is where a job posts.
type Target struct {
	Platform string
	Channel  string
}

// String renders the target as written in definitions.
func (t Target) String() string {
	if t.Platform == "" {
		return ""
	}
	return t.Platform + ":" + t.Channel
}

// localChannel is the local adapter's default channel (local.DefaultChannel).
const localChannel = "local"

// ParseTarget reads "slack:C123", "feishu:oc_xxx" (or "lark:oc_xxx"),
// "local" or "local:CHANNEL".
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == bot.PlatformLocal {
		return Target{Platform: bot.PlatformLocal, Channel: localChannel}, nil
	}
	p, ch, ok := strings.Cut(s, ":")
	if !ok {
		return Target{}, fmt.Errorf("target %q must look like slack:C123, feishu:oc_xxx or local", s)
	}
	p, ch = strings.ToLower(strings.TrimSpace(p)), strings.TrimSpace(ch)
	if p == "lark" {
		p = bot.PlatformFeishu
	}
	switch p {
	case bot.PlatformSlack, bot.PlatformFeishu, bot.PlatformLocal:
	default:
		return Target{}, fmt.Errorf("target %q: unknown platform %q (slack, feishu, local)", s, p)
	}
	if ch == "" || strings.ContainsAny(ch, " \t/") {
		return Target{}, fmt.Errorf("target %q: channel id is missing or malformed", s)
	}
	return Target{Platform: p, Channel: ch}, nil
}

var jobNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// file is the shape of SLEUTH_JOBS_FILE.
type file struct {
	Jobs []Def `yaml:"jobs"`
}

// Builtins returns sleuth's default jobs: the nightly memory cleanup.
// A job of the same name in SLEUTH_JOBS_FILE replaces it (enabled: false
// turns it off).
func Builtins() []Def {
	return []Def{{
		Name:     "memory-cleanup",
		Schedule: "30 3 * * *",
		Skill:    KindMemoryCleanup,
		Args: map[string]any{
			"max_priority":    1,
			"older_than":      "24h",
			"ttl":             map[string]any{"task_result": "30d"},
			"attachment_days": 14,
			"history_days":    90,
		},
		Builtin: true,
	}}
}

// Load reads the definitions file (YAML; "" for none) and merges it with
// Builtins. Definitions that cannot run are left out and reported in
// problems, one error per job naming it and the reason (errors.Is
// ErrInvalidDef); the others are returned. A file that cannot be read or
// parsed is one problem, and the built-ins still run.
func Load(path string) (defs []Def, problems []error) {
	var user []Def
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, fmt.Errorf("jobs file: %w", err))
		} else if user, err = Parse(b); err != nil {
			problems = append(problems, fmt.Errorf("jobs file %s: %w", path, err))
		}
	}
	defs, more := Merge(Builtins(), user)
	return defs, append(problems, more...)
}

// Parse reads definitions from YAML: a document with a "jobs" list, or a
// bare list.
func Parse(b []byte) ([]Def, error) {
	var f file
	if err := yaml.Unmarshal(b, &f); err != nil {
		var list []Def
		if err2 := yaml.Unmarshal(b, &list); err2 != nil {
			return nil, err
		}
		return list, nil
	}
	return f.Jobs, nil
}

// Merge validates builtins and user definitions; a user definition
// replaces the built-in of the same name. Invalid or duplicate
// definitions are reported and left out.
func Merge(builtins, user []Def) (defs []Def, problems []error) {
	seen := map[string]bool{}
	var valid []Def
	for i, d := range user {
		if d.Name == "" {
			problems = append(problems, fmt.Errorf("%w: job #%d: name is required", ErrInvalidDef, i+1))
			continue
		}
		if seen[d.Name] {
			problems = append(problems, fmt.Errorf("%w: job %q: defined twice", ErrInvalidDef, d.Name))
			continue
		}
		seen[d.Name] = true
		if err := d.Validate(); err != nil {
			problems = append(problems, err)
			continue
		}
		valid = append(valid, d)
	}
	for _, d := range builtins {
		if seen[d.Name] {
			continue
		}
		if err := d.Validate(); err != nil {
			problems = append(problems, err)
			continue
		}
		defs = append(defs, d)
	}
	return append(defs, valid...), problems
}

// Validate checks what can be checked without the running system: name,
// schedule, time zone, skill, target and the kinds' arguments. The error
// names the job and every reason (errors.Is ErrInvalidDef).
func (d Def) Validate() error {
	var errs []error
	if !jobNameRE.MatchString(d.Name) {
		errs = append(errs, errors.New("name must be lowercase letters, digits, '-', '_' or '.', at most 63 characters"))
	}
	if _, err := parseSchedule(d.Schedule, d.Timezone); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(d.Skill) == "" {
		errs = append(errs, errors.New("skill is required (a skill name, log-report or memory-cleanup)"))
	}
	switch {
	case d.Target == "" && d.Skill != KindMemoryCleanup:
		errs = append(errs, errors.New("target is required (slack:C123, feishu:oc_xxx or local)"))
	case d.Target != "":
		if _, err := ParseTarget(d.Target); err != nil {
			errs = append(errs, err)
		}
	}
	switch d.Skill {
	case KindLogReport:
		if _, err := parseReportArgs(d.Args); err != nil {
			errs = append(errs, err)
		}
	case KindMemoryCleanup:
		if _, err := parseCleanupArgs(d.Args); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: job %q: %w", ErrInvalidDef, d.Name, errors.Join(errs...))
}

// schedule is a parsed schedule in its time zone.
type schedule struct {
	s   cron.Schedule
	loc *time.Location
}

// Next returns the first occurrence strictly after t.
func (s schedule) Next(t time.Time) time.Time { return s.s.Next(t.In(s.loc)) }

// last returns the latest occurrence in (from, to], or zero.
func (s schedule) last(from, to time.Time) time.Time {
	var prev time.Time
	for i, n := 0, s.Next(from); !n.IsZero() && !n.After(to) && i < 1_000_000; i, n = i+1, s.Next(n) {
		prev = n
	}
	return prev
}

// every fires at multiples of d since the Unix epoch, so two replicas
// started at different times agree on the occurrences (cron's own @every
// counts from start-up).
type every struct{ d time.Duration }

func (e every) Next(t time.Time) time.Time {
	n := t.UnixNano()
	step := e.d.Nanoseconds()
	return time.Unix(0, (n/step+1)*step).In(t.Location())
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule reads a 5-field cron line, a descriptor (@daily, @hourly,
// @every 1h), optionally prefixed with CRON_TZ=Zone, in timezone tz (""
// means the process's local zone).
func parseSchedule(spec, tz string) (schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return schedule{}, errors.New("schedule is required (5-field cron, @daily, @every 1h)")
	}
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		head, rest, _ := strings.Cut(spec, " ")
		_, zone, _ := strings.Cut(head, "=")
		if tz != "" && tz != zone {
			return schedule{}, fmt.Errorf("schedule says %s but timezone says %q", head, tz)
		}
		tz, spec = zone, strings.TrimSpace(rest)
	}
	loc := time.Local
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return schedule{}, fmt.Errorf("timezone %q: %w", tz, err)
		}
		loc = l
	}
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return schedule{}, fmt.Errorf("schedule %q: %w", spec, err)
		}
		if d < time.Second || d%time.Second != 0 {
			return schedule{}, fmt.Errorf("schedule %q: @every needs whole seconds, at least 1s", spec)
		}
		return schedule{s: every{d}, loc: loc}, nil
	}
	if len(strings.Fields(spec)) == 6 {
		return schedule{}, fmt.Errorf("schedule %q has 6 fields; use 5 (minute hour day month weekday)", spec)
	}
	s, err := cronParser.Parse(spec)
	if err != nil {
		return schedule{}, fmt.Errorf("schedule %q: %w", spec, err)
	}
	if s.Next(time.Now()).IsZero() {
		return schedule{}, fmt.Errorf("schedule %q never fires", spec)
	}
	return schedule{s: s, loc: loc}, nil
}
