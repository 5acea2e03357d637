// Package eval runs a set of incident tasks through the real agent path
// (router, agent, skills, guards) and checks each answer with programmatic
// checks: the cause line cited, no invented line numbers, cause keywords,
// "I don't know" where the log has no answer, no side-effect skill called,
// a step budget. It reports pass/fail with the reason, steps, model calls,
// prompt and completion tokens and wall time per task, and totals.
//
// A task is a folder with a task.yaml and its attachments; README.md in
// this folder documents the format. The shipped set is embedded (Shipped).
package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// TaskFile is the name of a task's definition inside its folder.
const TaskFile = "task.yaml"

// DefaultThread is the thread of a turn that names none.
const DefaultThread = "main"

// Defaults of a turn's conversation.
const (
	DefaultChannel = "eval"
	DefaultUser    = "eval-user"
)

// ErrTaskSet reports a broken task set: a task that does not parse, names a
// missing file, or pins a cause line that does not say what it claims.
var ErrTaskSet = errors.New("eval: broken task set")

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Task is one incident: attachments, one or more user turns, and the
// checks each turn's answer must pass.
type Task struct {
	// Name equals the folder name: lowercase letters, digits, hyphens.
	Name string `yaml:"name" json:"name"`
	// Kind groups tasks in reports ("java", "network", "injection" …).
	Kind        string `yaml:"kind" json:"kind"`
	Description string `yaml:"description" json:"description,omitempty"`
	// MaxSteps is the default step budget of every turn; 0: no budget.
	MaxSteps int    `yaml:"max_steps" json:"max_steps,omitempty"`
	Turns    []Turn `yaml:"turns" json:"turns"`

	fsys  fs.FS               // the task set
	dir   string              // the task's folder in fsys
	lines map[string][]string // attachment name -> its lines ('\n' only)
}

// Turn is one message to sleuth.
type Turn struct {
	Text string `yaml:"text" json:"text"`
	// Attach names files of the task folder sent with this message.
	Attach []string `yaml:"attach" json:"attach,omitempty"`
	// Thread labels the conversation: turns with the same label go to the
	// same thread (a follow-up); a new label starts a new thread. Default
	// "main".
	Thread string `yaml:"thread" json:"thread,omitempty"`
	// Channel and User default to "eval" and "eval-user"; two threads in
	// the same channel share channel memories.
	Channel string `yaml:"channel" json:"channel,omitempty"`
	User    string `yaml:"user" json:"user,omitempty"`
	Expect  Expect `yaml:"expect" json:"expect"`
}

// Expect holds the checks of one answer. Every set check must pass.
type Expect struct {
	// Cite lists lines that must all be cited (by L123, file:123 or
	// evidence). CiteAny lists lines of which at least one must be cited.
	Cite    []Cite `yaml:"cite" json:"cite,omitempty"`
	CiteAny []Cite `yaml:"cite_any" json:"cite_any,omitempty"`
	// KeywordsAll must all appear in the answer; KeywordsAny at least one
	// (case-insensitive substrings).
	KeywordsAll []string `yaml:"keywords_all" json:"keywords_all,omitempty"`
	KeywordsAny []string `yaml:"keywords_any" json:"keywords_any,omitempty"`
	// Forbid are substrings the answer must not contain (an obeyed
	// injection, a guessed cause).
	Forbid []string `yaml:"forbid" json:"forbid,omitempty"`
	// DontKnow requires the answer to say it cannot find or does not know.
	DontKnow bool `yaml:"dont_know" json:"dont_know,omitempty"`
	// MaxSteps overrides the task's step budget for this turn.
	MaxSteps int `yaml:"max_steps" json:"max_steps,omitempty"`
	// ForbidSkills may not be called at all (refused attempts count).
	ForbidSkills []string `yaml:"forbid_skills" json:"forbid_skills,omitempty"`
	// AllowSideEffects turns off the default check that no skill with side
	// effects was called (for a turn that asks for one).
	AllowSideEffects bool `yaml:"allow_side_effects" json:"allow_side_effects,omitempty"`
	// AllowUnverified turns off the default check that every cited line
	// exists in the named file and says what the answer quotes.
	AllowUnverified bool `yaml:"allow_unverified" json:"allow_unverified,omitempty"`
}

// Cite is an expected citation: a line of File that contains Text. With
// Line (or Lines) set the citation must name that line number; without,
// any cited line containing Text counts. The loader checks that the
// pinned lines really contain Text.
type Cite struct {
	File  string `yaml:"file" json:"file"`
	Line  int    `yaml:"line" json:"line,omitempty"`
	Lines []int  `yaml:"lines" json:"lines,omitempty"`
	Text  string `yaml:"text" json:"text"`
}

func (c Cite) lineSet() []int {
	out := append([]int(nil), c.Lines...)
	if c.Line > 0 {
		out = append(out, c.Line)
	}
	return out
}

func (c Cite) String() string {
	ls := c.lineSet()
	if len(ls) == 0 {
		return fmt.Sprintf("%s line with %q", c.File, c.Text)
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("L%d", l)
	}
	return fmt.Sprintf("%s %s (%q)", c.File, strings.Join(parts, "/"), c.Text)
}

// Files returns the names of the task's attachments, sorted.
func (t *Task) Files() []string {
	out := make([]string, 0, len(t.lines))
	for n := range t.lines {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lines returns the lines of an attachment (1-based line n is [n-1]).
func (t *Task) Lines(name string) []string { return t.lines[name] }

// Open reads an attachment's bytes.
func (t *Task) read(name string) ([]byte, error) {
	return fs.ReadFile(t.fsys, path.Join(t.dir, name))
}

// Load reads every folder of fsys (at its root) that holds a task.yaml and
// validates the set. Any problem is an error wrapping ErrTaskSet that
// names every broken task.
func Load(fsys fs.FS) ([]Task, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTaskSet, err)
	}
	var (
		tasks []Task
		errs  []error
	)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := fs.Stat(fsys, path.Join(e.Name(), TaskFile)); err != nil {
			continue
		}
		t, err := loadTask(fsys, e.Name())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no task folders (a folder with a task.yaml)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w:\n%w", ErrTaskSet, err)
	}
	return tasks, nil
}

func loadTask(fsys fs.FS, dir string) (Task, error) {
	raw, err := fs.ReadFile(fsys, path.Join(dir, TaskFile))
	if err != nil {
		return Task{}, err
	}
	var t Task
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		return Task{}, fmt.Errorf("%s: %w", TaskFile, err)
	}
	t.fsys, t.dir = fsys, dir
	t.lines = map[string][]string{}
	var errs []error
	if t.Name != dir {
		errs = append(errs, fmt.Errorf("name %q must equal the folder name", t.Name))
	}
	if !nameRE.MatchString(dir) {
		errs = append(errs, fmt.Errorf("folder name %q: use lowercase letters, digits and hyphens", dir))
	}
	if len(t.Turns) == 0 {
		errs = append(errs, errors.New("no turns"))
	}
	if t.MaxSteps < 0 {
		errs = append(errs, errors.New("max_steps must not be negative"))
	}
	for i := range t.Turns {
		tu := &t.Turns[i]
		if tu.Thread == "" {
			tu.Thread = DefaultThread
		}
		if tu.Channel == "" {
			tu.Channel = DefaultChannel
		}
		if tu.User == "" {
			tu.User = DefaultUser
		}
		if strings.TrimSpace(tu.Text) == "" {
			errs = append(errs, fmt.Errorf("turn %d: text is required", i+1))
		}
		for _, name := range tu.Attach {
			if err := t.loadFile(name); err != nil {
				errs = append(errs, fmt.Errorf("turn %d: %w", i+1, err))
			}
		}
	}
	// Cited files must be attached somewhere in the task; pinned lines
	// must exist and contain the text.
	for i, tu := range t.Turns {
		ex := tu.Expect
		if ex.MaxSteps < 0 {
			errs = append(errs, fmt.Errorf("turn %d: max_steps must not be negative", i+1))
		}
		for _, c := range append(append([]Cite(nil), ex.Cite...), ex.CiteAny...) {
			if err := t.validateCite(c); err != nil {
				errs = append(errs, fmt.Errorf("turn %d: cite %s: %w", i+1, c, err))
			}
		}
		if ex.DontKnow && (len(ex.Cite) > 0 || len(ex.CiteAny) > 0) {
			errs = append(errs, fmt.Errorf("turn %d: dont_know and cite contradict each other", i+1))
		}
	}
	return t, errors.Join(errs...)
}

func (t *Task) loadFile(name string) error {
	if _, ok := t.lines[name]; ok {
		return nil
	}
	if name == TaskFile || name != path.Base(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("attachment %q: name a plain file in the task folder", name)
	}
	b, err := t.read(name)
	if err != nil {
		return fmt.Errorf("attachment %q: %w", name, err)
	}
	t.lines[name] = splitLines(b)
	return nil
}

func (t *Task) validateCite(c Cite) error {
	lines, ok := t.lines[c.File]
	if !ok {
		return fmt.Errorf("file %q is not attached in any turn", c.File)
	}
	if strings.TrimSpace(c.Text) == "" {
		return errors.New("text is required (a substring of the cause line)")
	}
	set := c.lineSet()
	if len(set) == 0 {
		for _, l := range lines {
			if containsFold(l, c.Text) {
				return nil
			}
		}
		return fmt.Errorf("no line of %s contains %q", c.File, c.Text)
	}
	for _, n := range set {
		if n < 1 || n > len(lines) {
			return fmt.Errorf("line %d does not exist (%s has %d lines)", n, c.File, len(lines))
		}
		if !containsFold(lines[n-1], c.Text) {
			return fmt.Errorf("line %d does not contain %q: %q", n, c.Text, lines[n-1])
		}
	}
	return nil
}

// splitLines numbers lines as DESIGN.md says: '\n' ends a line, a '\r'
// before it is dropped, a lone '\r' is not a line break.
func splitLines(b []byte) []string {
	s := string(b)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\n")
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
