// Package skills defines what a skill is (a SKILL.md spec plus a handler),
// the registry the agent picks skills from, and the loader for built-in and
// external skills. Built-in skills live in one folder each below this one.
package skills

import (
	"context"
	"encoding/json"
)

// Result statuses.
const (
	StatusOK        = "ok"
	StatusError     = "error"      // a mistake the model can fix; Output says how
	StatusNeedInput = "need_input" // the skill needs something from the user
)

// Spec is a skill's contract, read from the front matter of its SKILL.md
// (Agent Skills format plus sleuth's fields).
type Spec struct {
	Name          string            `yaml:"name" json:"name"`
	Description   string            `yaml:"description" json:"description"`
	License       string            `yaml:"license,omitempty" json:"license,omitempty"`
	Compatibility string            `yaml:"compatibility,omitempty" json:"compatibility,omitempty"`
	Metadata      map[string]string `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	AllowedTools  string            `yaml:"allowed-tools,omitempty" json:"allowed_tools,omitempty"`
	WhenToUse     string            `yaml:"when_to_use,omitempty" json:"when_to_use,omitempty"`
	// Parameters is a JSON Schema object.
	Parameters    map[string]any `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Examples      []string       `yaml:"examples,omitempty" json:"examples,omitempty"`
	ConflictsWith []string       `yaml:"conflicts_with,omitempty" json:"conflicts_with,omitempty"`
	// SideEffects marks skills that change something outside the session
	// (post, delete, remember). They are allow-listed and never triggered
	// by text inside a log.
	SideEffects bool `yaml:"side_effects,omitempty" json:"side_effects,omitempty"`
	// Body is the markdown after the front matter: the model's manual.
	Body string `yaml:"-" json:"-"`
	// Dir is where an external skill lives; empty for built-ins.
	Dir string `yaml:"-" json:"-"`
}

// File is an attachment of the session, already in its workspace.
type File struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	// SHA256 is the hex content hash when the caller knows it (optional;
	// analyze-log computes it when empty).
	SHA256 string `json:"sha256,omitempty"`
}

// Env is what a skill may know about the turn it runs in.
type Env struct {
	SessionKey string
	Workspace  string // the session's files directory
	Platform   string
	Tenant     string
	Channel    string // empty in a DM
	User       string
	DM         bool
	Link       string // permalink of the thread, when known
	Files      []File
}

// FileByName finds an attachment by exact name, then by case-insensitive
// name; with name empty and one file attached it returns that file.
func (e Env) FileByName(name string) (File, bool) {
	if name == "" && len(e.Files) == 1 {
		return e.Files[0], true
	}
	for _, f := range e.Files {
		if f.Name == name {
			return f, true
		}
	}
	for _, f := range e.Files {
		if equalFold(f.Name, name) {
			return f, true
		}
	}
	return File{}, false
}

// FileNames returns the names of the attached files, in order.
func (e Env) FileNames() []string {
	names := make([]string, len(e.Files))
	for i, f := range e.Files {
		names[i] = f.Name
	}
	return names
}

// UnknownFile is the error result for a file name that is not attached:
// it lists the files that are, so the model can correct itself.
func UnknownFile(e Env, name string) Result {
	switch {
	case len(e.Files) == 0:
		return Errorf("no file is attached to this conversation; ask the user to attach the log")
	case name == "":
		return Errorf("several files are attached; name one in \"file\": %s", quoteList(e.FileNames()))
	}
	return Errorf("no attached file is called %q; attached files: %s", name, quoteList(e.FileNames()))
}

// Call is one invocation.
type Call struct {
	Skill string          `json:"skill"`
	Args  json.RawMessage `json:"args"` // validated against Spec.Parameters
	Env   Env             `json:"-"`
}

// Memory is a memory a skill asks to be remembered long-term.
type Memory struct {
	Scope        string   `json:"scope"` // "user" | "channel"
	Type         string   `json:"type"`
	Priority     int      `json:"priority"`
	Content      string   `json:"content"`
	Fingerprints []string `json:"fingerprints,omitempty"`
	File         string   `json:"file,omitempty"`
	Line         int      `json:"line,omitempty"`
}

// LineRef is a line a skill showed or relied on.
type LineRef struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
}

// Result is what a skill returns. A Go error from Run means infrastructure
// failure; a mistake the model can fix is a Result with StatusError.
type Result struct {
	Status string `json:"status"`
	// Output is what the model reads.
	Output      string   `json:"output"`
	NewMemories []Memory `json:"new_memories,omitempty"`
	// Lines are the log lines the output cites (evidence candidates).
	Lines []LineRef `json:"lines,omitempty"`
	// Fingerprints are template ids of the errors found (analyze-log).
	Fingerprints []string       `json:"fingerprints,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// Skill is a spec plus a handler.
type Skill interface {
	Spec() Spec
	Run(ctx context.Context, c Call) (Result, error)
}

// DecodeArgs unmarshals a call's (validated) arguments into v. When they
// do not fit, it returns an error result naming the expected parameters
// and ok false.
func DecodeArgs(spec Spec, raw json.RawMessage, v any) (r Result, ok bool) {
	if len(raw) == 0 {
		return Result{}, true
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Errorf("arguments: %v. Expected parameters: %s", err, SchemaHint(spec.Parameters)), false
	}
	return Result{}, true
}

// Errorf returns an error result with a hint for the model.
func Errorf(format string, args ...any) Result {
	return Result{Status: StatusError, Output: sprintf(format, args...)}
}
