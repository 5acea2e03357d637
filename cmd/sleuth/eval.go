package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"regexp"

	"github.com/sleuth-bot/sleuth/agent/eval"
)

// cmdEval runs the eval task set through the real agent path and prints
// the report. It exits 0 when tasks fail (the report says which), 2 on bad
// flags or configuration, 3 on a broken task set, 1 when the run itself
// could not finish.
func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEval(ctx, args, os.LookupEnv, stdout, stderr)
}

func runEval(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("sleuth eval", flag.ContinueOnError)
	fl.SetOutput(stderr)
	tasksDir := fl.String("tasks", "", "task set folder (default: the shipped set)")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	compare := fl.Bool("compare-offline", false, "also run the offline brain and show both side by side")
	runRE := fl.String("run", "", "run only tasks whose name matches this regular expression")
	keep := fl.Bool("keep", false, "keep each task's data dir (printed in the log) for inspection")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "Usage: sleuth eval [--tasks DIR] [--json] [--compare-offline] [--run NAME-REGEX] [--keep]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "sleuth eval: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	var re *regexp.Regexp
	if *runRE != "" {
		var err error
		if re, err = regexp.Compile(*runRE); err != nil {
			fmt.Fprintf(stderr, "sleuth eval: --run: %v\n", err)
			return 2
		}
	}

	base, err := loadConfig(newEnv(lookup))
	if err != nil {
		fmt.Fprintf(stderr, "sleuth: configuration:\n%s\n", indent(err.Error()))
		return 2
	}
	// Logs go to stderr at warn and above: the report is the output.
	level := "warn"
	switch {
	case base.LogLevel == "debug" || base.LogLevel == "error":
		level = base.LogLevel
	case *keep:
		level = "info"
	}
	log := newLogger(stderr, level, base.LogFormat)

	var fsys fs.FS = eval.Shipped()
	if *tasksDir != "" {
		st, err := os.Stat(*tasksDir)
		if err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "sleuth eval: --tasks %s: not a readable directory\n", *tasksDir)
			return 3
		}
		fsys = os.DirFS(*tasksDir)
	}
	tasks, err := eval.Load(fsys)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth eval: %v\n", err)
		return 3
	}
	tasks = eval.Filter(tasks, re)
	if len(tasks) == 0 {
		fmt.Fprintf(stderr, "sleuth eval: no task matches --run %q\n", *runRE)
		return 3
	}

	runner, err := eval.New(eval.Config{NewCore: evalCore(lookup, log), Keep: *keep, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "sleuth eval: %v\n", err)
		return 1
	}
	var out eval.Comparison
	out.Model, err = runner.Run(ctx, tasks, false)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth eval: %v\n", err)
		return 1
	}
	if *compare {
		if !base.LLMEnabled() {
			fmt.Fprintln(stderr, "sleuth eval: no model is configured (LLM_MODEL), so the run above is the offline baseline; nothing to compare")
		} else {
			off, err := runner.Run(ctx, tasks, true)
			if err != nil {
				fmt.Fprintf(stderr, "sleuth eval: %v\n", err)
				return 1
			}
			out.Offline = &off
		}
	}
	if *asJSON {
		err = out.WriteJSON(stdout)
	} else {
		err = out.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sleuth eval: %v\n", err)
		return 1
	}
	return 0
}

// evalCore builds the real agent (buildCore) for one task in a fresh data
// dir; the offline baseline blanks the LLM_* variables.
func evalCore(lookup func(string) (string, bool), log *slog.Logger) func(ctx context.Context, env eval.CoreEnv) (*eval.Core, error) {
	return func(ctx context.Context, env eval.CoreEnv) (*eval.Core, error) {
		l := func(name string) (string, bool) {
			switch name {
			case "SLEUTH_DATA_DIR":
				return env.DataDir, true
			case "QDRANT_URL", "SLEUTH_JOBS_FILE":
				// A task's memories stay in its own data dir; no schedules.
				return "", false
			}
			if env.Offline && len(name) > 4 && name[:4] == "LLM_" {
				return "", false
			}
			return lookup(name)
		}
		e := newEnv(l)
		cfg, err := loadConfig(e)
		if err != nil {
			return nil, err
		}
		c, err := buildCore(ctx, cfg, e, log)
		if err != nil {
			return nil, err
		}
		return &eval.Core{
			Runner: c.agent, Sessions: c.sessions, Brain: c.brain,
			SideEffect: func(name string) bool {
				s, ok := c.registry.Get(name)
				return ok && s.Spec().SideEffects
			},
			Close: c.Close,
		}, nil
	}
}
