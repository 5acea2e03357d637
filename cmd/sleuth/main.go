// Command sleuth is a chat-ops agent for Slack and Feishu/Lark that reads
// log files and explains what went wrong. main only wires packages.
//
// Usage:
//
//	sleuth                         serve (local chat with no platform configured)
//	sleuth analyze FILE... [--json] [--top N] [--baseline GOOD]
//	sleuth templates FILE --jsonl
//	sleuth skills list|validate DIR
//	sleuth memory list|search|forget
//	sleuth jobs list|run NAME|history [NAME]
//	sleuth eval [--tasks DIR] [--json] [--compare-offline]
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `sleuth — reads your logs and tells you what went wrong.

Usage:
  sleuth                          run the bot (local chat and HTTP API when no platform is configured)
  sleuth analyze FILE... [--json] [--top N] [--baseline GOOD.log]
  sleuth templates FILE --jsonl
  sleuth skills list | validate DIR
  sleuth memory list | search TEXT | forget ID
  sleuth jobs list | run NAME | history [NAME]
  sleuth eval [--tasks DIR] [--json] [--compare-offline]

Configuration comes from the environment; see .env.example.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cmdServe(ctx, stdin, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, stdin, stdout, stderr)
	case "analyze":
		return cmdAnalyze(ctx, args[1:], stdout, stderr)
	case "templates":
		return cmdTemplates(ctx, args[1:], stdout, stderr)
	case "health":
		return cmdHealth(ctx, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		if sub, ok := subcommands[args[0]]; ok {
			return sub(ctx, args[1:], stdout, stderr)
		}
		fmt.Fprintf(stderr, "sleuth: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// subcommands maps the remaining subcommands to their entry points.
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"memory": cmdMemory,
	"eval":   cmdEval,
	"jobs":   cmdJobs,
	"skills": cmdSkills,
}
