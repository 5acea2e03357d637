package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/sleuth-bot/sleuth/jobs"
)

const jobsUsage = `Usage:
  sleuth jobs list [--json]             jobs, schedules, next and last runs, rejected definitions
  sleuth jobs run NAME                  run a job now, through the scheduler's path (claim, retries, delivery)
  sleuth jobs history [NAME] [--limit N] [--json]

Reads SLEUTH_JOBS_FILE (YAML definitions), SLEUTH_REPORT_PATHS (globs
log reports may read), SLEUTH_OWNER_CHANNEL (failure notices, e.g.
slack:C999), SLEUTH_JOBS_GRACE (catch-up window, default 2h, "off"),
plus the platform and data settings of serve.
`

// buildJobs builds the scheduler with the same wiring as serve (database,
// adapters, skills, sessions) without starting it; the returned func
// releases what it opened. Tests replace it.
var buildJobs = jobsFromEnv

// cmdJobs runs "sleuth jobs list|run|history".
func cmdJobs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, jobsUsage)
		return 0
	}
	verb := args[0]
	fs := flag.NewFlagSet("sleuth jobs "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 20, "history: at most this many runs")
	// Flags may follow the job name.
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	switch {
	case verb != "list" && verb != "run" && verb != "history":
		fmt.Fprintf(stderr, "sleuth jobs: unknown command %q\n\n%s", verb, jobsUsage)
		return 2
	case verb == "run" && len(pos) != 1, verb == "history" && len(pos) > 1, verb == "list" && len(pos) > 0:
		fmt.Fprintf(stderr, "sleuth jobs %s: wrong arguments\n\n%s", verb, jobsUsage)
		return 2
	}
	if buildJobs == nil {
		fmt.Fprintln(stderr, "sleuth jobs: the scheduler is not wired into this build")
		return 1
	}
	s, closeFn, err := buildJobs(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth jobs: %v\n", err)
		return 1
	}
	if closeFn != nil {
		defer closeFn()
	}
	switch verb {
	case "list":
		return jobsList(ctx, s, *asJSON, stdout, stderr)
	case "run":
		return jobsRun(ctx, s, pos[0], *asJSON, stdout, stderr)
	default:
		name := ""
		if len(pos) == 1 {
			name = pos[0]
		}
		return jobsHistory(ctx, s, name, *limit, *asJSON, stdout, stderr)
	}
}

func jobsList(ctx context.Context, s *jobs.Scheduler, asJSON bool, stdout, stderr io.Writer) int {
	list, err := s.List(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth jobs list: %v\n", err)
		return 1
	}
	problems := s.Problems()
	if asJSON {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Error()
		}
		writeJSONTo(stdout, map[string]any{"jobs": list, "rejected": msgs})
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSCHEDULE\tSKILL\tTARGET\tNEXT\tLAST")
		for _, in := range list {
			next := "disabled"
			if !in.Next.IsZero() {
				next = in.Next.Local().Format("2006-01-02 15:04 MST")
			}
			last := "never"
			if in.Last != nil {
				last = in.Last.Status + " " + in.Last.Started.Local().Format("01-02 15:04")
			}
			sched := in.Schedule
			if in.Timezone != "" {
				sched += " (" + in.Timezone + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, sched, in.Skill, orDash(in.Target), next, last)
		}
		tw.Flush()
		for _, p := range problems {
			fmt.Fprintf(stdout, "rejected: %v\n", p)
		}
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

func jobsRun(ctx context.Context, s *jobs.Scheduler, name string, asJSON bool, stdout, stderr io.Writer) int {
	r, err := s.RunNow(ctx, name)
	if asJSON && !errors.Is(err, jobs.ErrUnknownJob) {
		writeJSONTo(stdout, r)
	}
	switch {
	case errors.Is(err, jobs.ErrUnknownJob):
		fmt.Fprintf(stderr, "sleuth jobs run: %v (see sleuth jobs list)\n", err)
		return 2
	case err != nil:
		if !asJSON {
			fmt.Fprintf(stderr, "sleuth jobs run %s: %s after %d attempts: %v\n", name, orDash(r.Status), r.Attempts, err)
		}
		return 1
	}
	if !asJSON {
		fmt.Fprintf(stdout, "%s: %s", name, r.Status)
		if r.MessageID != "" {
			fmt.Fprintf(stdout, " to %s (message %s)", r.Target, r.MessageID)
		}
		fmt.Fprintf(stdout, " in %s, %d attempt(s)\n", r.Finished.Sub(r.Started).Round(time.Millisecond), r.Attempts)
		if r.Summary != "" {
			fmt.Fprintf(stdout, "  %s\n", r.Summary)
		}
	}
	return 0
}

func jobsHistory(ctx context.Context, s *jobs.Scheduler, name string, limit int, asJSON bool, stdout, stderr io.Writer) int {
	runs, err := s.History(ctx, name, limit)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth jobs history: %v\n", err)
		if errors.Is(err, jobs.ErrUnknownJob) {
			return 2
		}
		return 1
	}
	if asJSON {
		writeJSONTo(stdout, runs)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSCHEDULED\tSTATUS\tATTEMPTS\tMESSAGE\tINSTANCE\tDETAIL")
	for _, r := range runs {
		detail := r.Summary
		if r.Error != "" {
			detail = r.Error
		}
		when := r.Scheduled.Local().Format("2006-01-02 15:04:05")
		if r.Manual {
			when += " (manual)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Job, when, r.Status, r.Attempts, orDash(r.MessageID), r.Instance, detail)
	}
	tw.Flush()
	return 0
}

func writeJSONTo(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
