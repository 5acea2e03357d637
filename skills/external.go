package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Limits of external skills.
const (
	// DefaultExternalTimeout bounds one run of an external skill; a
	// SKILL.md may lower or raise it with metadata.timeout ("10s").
	DefaultExternalTimeout = 30 * time.Second
	// MaxExternalOutput caps what an external skill may write on stdout.
	MaxExternalOutput = 1 << 20
	// maxExternalStderr is how much of stderr is kept for the error result.
	maxExternalStderr = 2 << 10
	// externalProgram is the executable a skill folder must hold.
	externalProgram = "run"
	specFile        = "SKILL.md"
)

// Errors of the external-skill loader.
var (
	ErrNoProgram = errors.New("no executable 'run' beside SKILL.md")
	ErrNameDir   = errors.New("name must match the folder name")
)

// External is a skill implemented by an executable: SKILL.md plus a program
// called run in the same folder. Run executes it directly (no shell) with
// the call as JSON on stdin:
//
//	{"args": {...}, "env": {"session": "...", "workspace": "...", "platform": "...",
//	 "tenant": "...", "channel": "...", "user": "...", "files": [{"name","path","size"}]}}
//
// and reads a Result as JSON from stdout. The program runs in the session's
// workspace with a scrubbed environment (PATH, HOME = the workspace, LANG)
// and a timeout; stdout is capped at MaxExternalOutput. A non-zero exit, a
// timeout, too much output or invalid JSON come back as error results. Safe
// for concurrent use.
type External struct {
	spec    Spec
	program string
	timeout time.Duration
}

// externalInput is what an external skill reads on stdin.
type externalInput struct {
	Args json.RawMessage `json:"args"`
	Env  externalEnv     `json:"env"`
}

type externalEnv struct {
	Session   string `json:"session"`
	Workspace string `json:"workspace"`
	Platform  string `json:"platform,omitempty"`
	Tenant    string `json:"tenant,omitempty"`
	Channel   string `json:"channel,omitempty"`
	User      string `json:"user,omitempty"`
	DM        bool   `json:"dm,omitempty"`
	Link      string `json:"link,omitempty"`
	Files     []File `json:"files"`
}

// LoadExternal loads the skill in dir: SKILL.md (whose name must match the
// folder name) and an executable regular file called run.
func LoadExternal(dir string) (*External, error) {
	md, err := os.ReadFile(filepath.Join(dir, specFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	spec, err := ParseSpec(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, specFile), err)
	}
	if base := filepath.Base(dir); spec.Name != base {
		return nil, fmt.Errorf("%s: %w (name %q, folder %q)", filepath.Join(dir, specFile), ErrNameDir, spec.Name, base)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	program := filepath.Join(abs, externalProgram)
	fi, err := os.Stat(program)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, ErrNoProgram)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return nil, fmt.Errorf("%s: %w (run is not an executable file)", dir, ErrNoProgram)
	}
	timeout := DefaultExternalTimeout
	if s := spec.Metadata["timeout"]; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: metadata.timeout %q is not a positive duration such as 10s", filepath.Join(dir, specFile), s)
		}
		timeout = d
	}
	spec.Dir = abs
	return &External{spec: spec, program: program, timeout: timeout}, nil
}

// LoadDir loads every subfolder of dir that holds a SKILL.md as an external
// skill. A broken skill is reported in problems and skipped; the others
// still load. The list is sorted by name.
func LoadDir(dir string) (list []Skill, problems []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []error{fmt.Errorf("skills dir: %w", err)}
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, specFile)); err != nil {
			continue // not a skill folder
		}
		s, err := LoadExternal(sub)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if seen[s.spec.Name] {
			problems = append(problems, fmt.Errorf("%s: skill %q defined twice", sub, s.spec.Name))
			continue
		}
		seen[s.spec.Name] = true
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Spec().Name < list[j].Spec().Name })
	return list, problems
}

// Spec returns the skill's spec.
func (x *External) Spec() Spec { return x.spec }

// Timeout returns how long one run may take.
func (x *External) Timeout() time.Duration { return x.timeout }

// Run executes the program. See External.
func (x *External) Run(ctx context.Context, c Call) (Result, error) {
	args := c.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	files := c.Env.Files
	if files == nil {
		files = []File{}
	}
	workspace := c.Env.Workspace
	if workspace == "" {
		// No session workspace (a CLI run): confine the program to a
		// fresh empty folder.
		tmp, err := os.MkdirTemp("", "sleuth-skill-")
		if err != nil {
			return Result{}, fmt.Errorf("external skill %s: workspace: %w", x.spec.Name, err)
		}
		defer os.RemoveAll(tmp)
		workspace = tmp
	}
	in, err := json.Marshal(externalInput{Args: args, Env: externalEnv{
		Session: c.Env.SessionKey, Workspace: workspace, Platform: c.Env.Platform, Tenant: c.Env.Tenant,
		Channel: c.Env.Channel, User: c.Env.User, DM: c.Env.DM, Link: c.Env.Link, Files: files,
	}})
	if err != nil {
		return Result{}, fmt.Errorf("external skill %s: marshal input: %w", x.spec.Name, err)
	}

	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.program)
	cmd.Dir = workspace
	cmd.Env = scrubbedEnv(workspace)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &capWriter{max: MaxExternalOutput}
	stderr := &capWriter{max: maxExternalStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	// Children that keep the pipes open must not hold Run hostage.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	took := time.Since(start)
	meta := map[string]any{"duration_ms": took.Milliseconds(), "stdout_bytes": stdout.n}

	switch {
	case ctx.Err() == context.DeadlineExceeded:
		slog.Warn("external skill timed out", "skill", x.spec.Name, "timeout", x.timeout.String())
		return withMeta(Errorf("skill %s timed out after %s; try narrower arguments", x.spec.Name, x.timeout), meta), nil
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("external skill %s: %w", x.spec.Name, ctx.Err())
	case stdout.over:
		return withMeta(Errorf("skill %s wrote more than %d bytes of output; ask for less", x.spec.Name, MaxExternalOutput), meta), nil
	case runErr != nil:
		var exit *exec.ExitError
		if !errors.As(runErr, &exit) {
			return Result{}, fmt.Errorf("external skill %s: %w", x.spec.Name, runErr)
		}
		slog.Warn("external skill failed", "skill", x.spec.Name, "exit_code", exit.ExitCode(), "stderr_bytes", stderr.n)
		msg := fmt.Sprintf("skill %s failed (exit status %d)", x.spec.Name, exit.ExitCode())
		if tail := strings.TrimSpace(stderr.buf.String()); tail != "" {
			msg += ": " + tail
		}
		return withMeta(Result{Status: StatusError, Output: msg}, meta), nil
	}

	var res Result
	dec := json.NewDecoder(bytes.NewReader(stdout.buf.Bytes()))
	if err := dec.Decode(&res); err != nil {
		return withMeta(Errorf("skill %s returned invalid JSON on stdout (%v); it must print one Result object", x.spec.Name, err), meta), nil
	}
	switch res.Status {
	case "":
		res.Status = StatusOK
	case StatusOK, StatusError, StatusNeedInput:
	default:
		return withMeta(Errorf("skill %s returned unknown status %q (want ok, error or need_input)", x.spec.Name, res.Status), meta), nil
	}
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	for k, v := range meta {
		res.Metadata[k] = v
	}
	return res, nil
}

func withMeta(r Result, meta map[string]any) Result {
	r.Metadata = meta
	return r
}

// scrubbedEnv is the whole environment an external program sees: no
// tokens, no keys, nothing of the operator's shell.
func scrubbedEnv(home string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	return []string{"PATH=" + path, "HOME=" + home, "LANG=" + lang}
}

// capWriter keeps up to max bytes and records whether more came.
type capWriter struct {
	buf  bytes.Buffer
	max  int
	n    int64
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	room := w.max - w.buf.Len()
	if room < len(p) {
		w.over = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

var _ io.Writer = (*capWriter)(nil)
