package jobs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLoadNamesBadDefinitionsAndKeepsTheRest(t *testing.T) {
	defs, problems := Load("testdata/jobs.yaml")
	byName := map[string]Def{}
	for _, d := range defs {
		byName[d.Name] = d
	}
	for _, ok := range []string{"morning-digest", "hourly-report", "memory-cleanup", "local-digest"} {
		if _, found := byName[ok]; !found {
			t.Errorf("valid job %q missing; got %v", ok, defs)
		}
	}
	if c := byName["memory-cleanup"]; c.Builtin || c.IsEnabled() {
		t.Errorf("the file's memory-cleanup should replace the built-in and disable it: %+v", c)
	}
	want := map[string]string{
		"bad-cron":      `schedule "61 9 * * *"`,
		"six-fields":    "has 6 fields",
		"bad-zone":      `timezone "Mars/Olympus"`,
		"no-target":     "target is required",
		"bad-target":    `unknown platform "teams"`,
		"no-skill":      "skill is required",
		"report-nopath": "paths is required",
		"Bad Name":      "name must be lowercase",
		"too-fast":      "at least 1s",
		"never":         "never fires",
		"zone-clash":    "but timezone says",
		"dup":           "defined twice",
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems; want %d:\n%v", len(problems), len(want), errors.Join(problems...))
	}
	for name, reason := range want {
		found := false
		for _, p := range problems {
			if strings.Contains(p.Error(), `job "`+name+`"`) && strings.Contains(p.Error(), reason) {
				found = errors.Is(p, ErrInvalidDef)
			}
		}
		if !found {
			t.Errorf("no problem names job %q with %q:\n%v", name, reason, errors.Join(problems...))
		}
	}
	if _, ok := byName["dup"]; !ok {
		t.Error("the first definition of a duplicate should be kept")
	}
}

func TestLoadMissingOrBrokenFileKeepsBuiltins(t *testing.T) {
	for _, path := range []string{"testdata/missing.yaml", "testdata/broken.yaml"} {
		defs, problems := Load(path)
		if len(problems) != 1 || len(defs) != 1 || defs[0].Name != "memory-cleanup" || !defs[0].Builtin {
			t.Errorf("%s: defs %v, problems %v", path, defs, problems)
		}
	}
	defs, problems := Load("")
	if len(problems) != 0 || len(defs) != 1 {
		t.Errorf("no file: %v %v", defs, problems)
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"slack:C123":   {"slack", "C123"},
		"feishu:oc_xx": {"feishu", "oc_xx"},
		"lark:oc_xx":   {"feishu", "oc_xx"},
		"local":        {"local", "local"},
		"local:ops":    {"local", "ops"},
		" Slack : C9 ": {"slack", "C9"},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "slack", "slack:", "teams:C1", "slack:C1/x", ":C1"} {
		if _, err := ParseTarget(in); err == nil {
			t.Errorf("ParseTarget(%q): no error", in)
		}
	}
}

func TestScheduleNextInZoneAndEveryAligned(t *testing.T) {
	s, err := parseSchedule("0 9 * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2025, 3, 10, 7, 30, 0, 0, time.UTC) // 08:30 in Berlin (CET)
	if got := s.Next(from).UTC(); !got.Equal(time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("09:00 Berlin = %v UTC; want 08:00", got)
	}
	s2, _ := parseSchedule("CRON_TZ=Asia/Shanghai @daily", "")
	if got := s2.Next(from).UTC(); !got.Equal(time.Date(2025, 3, 10, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("@daily Shanghai = %v", got)
	}
	// @every is aligned to the epoch: replicas started apart agree.
	e, _ := parseSchedule("@every 15m", "")
	a := e.Next(time.Date(2025, 3, 10, 7, 31, 12, 0, time.UTC))
	b := e.Next(time.Date(2025, 3, 10, 7, 44, 59, 0, time.UTC))
	if !a.Equal(b) || !a.Equal(time.Date(2025, 3, 10, 7, 45, 0, 0, time.UTC)) {
		t.Errorf("@every 15m next = %v and %v; want both 07:45", a, b)
	}
	if l := e.last(time.Date(2025, 3, 10, 7, 0, 0, 0, time.UTC), time.Date(2025, 3, 10, 7, 50, 0, 0, time.UTC)); !l.Equal(time.Date(2025, 3, 10, 7, 45, 0, 0, time.UTC)) {
		t.Errorf("last = %v", l)
	}
}
