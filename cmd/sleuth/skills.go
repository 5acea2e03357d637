package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/sleuth-bot/sleuth/skills"
)

const skillsUsage = `Usage:
  sleuth skills list [--json]     built-in skills, and external ones when SLEUTH_SKILLS_DIR is set
  sleuth skills validate DIR      check an external skill folder (or a folder of them)
`

// cmdSkills implements `sleuth skills list` and `sleuth skills validate DIR`.
func cmdSkills(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, skillsUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return skillsList(args[1:], stdout, stderr)
	case "validate":
		return skillsValidate(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, skillsUsage)
		return 0
	}
	fmt.Fprintf(stderr, "sleuth skills: unknown command %q\n\n%s", args[0], skillsUsage)
	return 2
}

type skillRow struct {
	Name        string `json:"name"`
	Source      string `json:"source"` // "builtin" or the external folder
	SideEffects bool   `json:"side_effects"`
	Description string `json:"description"`
}

func skillsList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("skills list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON lines")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reg, problems, err := servedSkills()
	if err != nil {
		fmt.Fprintf(stderr, "sleuth skills: %v\n", err)
		return 1
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "skipped: %v\n", p)
	}
	var rows []skillRow
	for _, s := range reg.List() {
		sp := s.Spec()
		src := "builtin"
		if sp.Dir != "" {
			src = sp.Dir
		}
		rows = append(rows, skillRow{Name: sp.Name, Source: src, SideEffects: sp.SideEffects, Description: sp.Description})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return 1
			}
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIDE EFFECTS\tSOURCE\tDESCRIPTION")
	for _, r := range rows {
		se := "no"
		if r.SideEffects {
			se = "yes"
		}
		src := r.Source
		if src != "builtin" {
			src = "external"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, se, src, firstSentence(r.Description, 90))
	}
	return exitOf(tw.Flush())
}

// skillsValidate checks DIR: one skill folder (with SKILL.md) or a folder
// of them. Each problem is printed; the exit code is 1 when there is any.
func skillsValidate(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, skillsUsage)
		return 2
	}
	dir := args[0]
	var (
		list     []skills.Skill
		problems []error
	)
	if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil {
		s, err := skills.LoadExternal(dir)
		if err != nil {
			problems = append(problems, err)
		} else {
			list = append(list, s)
		}
	} else {
		list, problems = skills.LoadDir(dir)
		if len(list) == 0 && len(problems) == 0 {
			problems = append(problems, fmt.Errorf("%s: no skill folder (a folder with SKILL.md and an executable run) found", dir))
		}
	}
	for _, s := range list {
		sp := s.Spec()
		var bad []error
		for _, ex := range sp.Examples {
			if _, err := skills.ValidateArgs(sp, json.RawMessage(ex)); err != nil {
				bad = append(bad, fmt.Errorf("%s: example %s: %w", sp.Dir, ex, err))
			}
		}
		if strings.TrimSpace(sp.Body) == "" {
			bad = append(bad, fmt.Errorf("%s: SKILL.md has no body; write when to use it, when not, and an example", sp.Dir))
		}
		if len(bad) == 0 {
			fmt.Fprintf(stdout, "ok  %s (%s)\n", sp.Name, sp.Dir)
		}
		problems = append(problems, bad...)
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "problem: %v\n", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

// firstSentence shortens a description for a table.
func firstSentence(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func exitOf(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

// servedSkills builds the registry exactly as serve does (built-in, memory,
// digest and external skills), on a throwaway data dir with the embedded
// memory store, so listing needs no database, Qdrant or network.
func servedSkills() (*skills.Registry, []error, error) {
	dir, err := os.MkdirTemp("", "sleuth-skills-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	e := newEnv(func(name string) (string, bool) {
		switch name {
		case "SLEUTH_DATA_DIR":
			return dir, true
		case "QDRANT_URL", "EMBED_MODEL":
			return "", false
		}
		return os.LookupEnv(name)
	})
	cfg, err := loadConfig(e)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration:\n%s", indent(err.Error()))
	}
	log := slog.New(slog.DiscardHandler)
	c, err := buildCore(context.Background(), cfg, e, log)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	return c.registry, c.skillProblems, nil
}
