package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/local"
	"github.com/sleuth-bot/sleuth/jobs"
	"github.com/sleuth-bot/sleuth/memory"
)

func TestCmdJobsListRunHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := memory.Open(ctx, memory.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	la, err := local.New(local.Config{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defs, problems := jobs.Merge(jobs.Builtins(), []jobs.Def{{Name: "bad", Schedule: "nope", Skill: "x", Target: "local"}})
	old := buildJobs
	defer func() { buildJobs = old }()
	buildJobs = func(context.Context) (*jobs.Scheduler, func(), error) {
		s, err := jobs.New(jobs.Config{DB: db.SQL(), DataDir: dir, Defs: append(defs, jobs.Def{Name: "report", Schedule: "@hourly", Skill: jobs.KindLogReport,
			Args: map[string]any{"paths": dir + "/*.log"}, Target: "local"}), ReportPaths: []string{dir + "/*.log"},
			Posters: map[string]jobs.Poster{bot.PlatformLocal: la}})
		return s, nil, err
	}
	if len(problems) != 1 {
		t.Fatalf("problems = %v", problems)
	}
	var out, errb bytes.Buffer
	if code := cmdJobs(ctx, []string{"list"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "memory-cleanup") || !strings.Contains(out.String(), "report") {
		t.Errorf("list: code %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := cmdJobs(ctx, []string{"run", "report"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "report: delivered") || len(la.Posts()) != 1 {
		t.Errorf("run: code %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := cmdJobs(ctx, []string{"history", "report", "--limit", "5"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "delivered") || !strings.Contains(out.String(), la.Posts()[0].ID) {
		t.Errorf("history: code %d\n%s%s", code, out.String(), errb.String())
	}
	if code := cmdJobs(ctx, []string{"run", "nope"}, &out, &errb); code != 2 {
		t.Errorf("unknown job: code %d", code)
	}
	if code := cmdJobs(ctx, []string{"frob"}, &out, &errb); code != 2 {
		t.Errorf("unknown verb: code %d", code)
	}
}
