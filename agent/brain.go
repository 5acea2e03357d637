package agent

import (
	"context"
	"encoding/json"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// Brain decides the next action of a turn from its state. The LLM brain asks
// a model; the offline brain follows a fixed triage plan and simple intents.
// A Brain must not modify the State it is given.
type Brain interface {
	// Name identifies the brain in logs, audit records and metrics.
	Name() string
	// Next returns the next action. An error means the brain itself failed
	// (model unreachable, unusable answers after retries); the agent then
	// falls back to the offline brain.
	Next(ctx context.Context, st *State) (Action, error)
}

// Summarizer is implemented by brains that can fold older turns of a long
// thread into a summary. Without it the agent keeps a rolling extract.
type Summarizer interface {
	Summarize(ctx context.Context, previous string, turns []memory.Turn) (summary string, tokens int, err error)
}

// Distiller is implemented by brains that can extract long-term memories
// from a finished turn (at most three, short, typed, with a priority).
type Distiller interface {
	Distill(ctx context.Context, goal, answer string) (mems []skills.Memory, tokens int, err error)
}

// Action is what a brain decided.
type Action struct {
	// Calls are skills to run, in order. Empty means Text is the answer.
	Calls []Call
	// Text is the answer (no calls), or the model's words that came with
	// the calls (a plan, a remark).
	Text string
	// Ask marks Text as a question to the person rather than an answer.
	Ask bool
	// PromptTokens and CompletionTokens are the model's usage for this
	// decision (estimated when the provider does not report them).
	PromptTokens, CompletionTokens int
}

// Call is one skill call requested by a brain, and what came of it.
type Call struct {
	// ID is the provider's tool_call_id; the agent assigns one when empty.
	ID    string
	Skill string
	// Args are the arguments as the brain sent them (possibly invalid JSON).
	Args json.RawMessage

	// Filled by the agent after running the call:

	// Status is skills.StatusOK, StatusError, StatusNeedInput, or
	// "refused" when a guard stopped the call.
	Status string
	// Output is what the model reads: redacted, capped and fenced.
	Output string
	// Result is the skill's result (zero when a guard refused the call).
	Result skills.Result
}

// Phase selects which parts of the persona go into the prompt.
type Phase int

// Phases of a turn.
const (
	// PhasePlan: no results yet; identity and boundaries plus workflow.
	PhasePlan Phase = iota
	// PhaseAct: results arrived; identity and boundaries plus output style,
	// since the next message may be the answer.
	PhaseAct
	// PhaseAnswer: the agent requires an answer now (a cap was hit).
	PhaseAnswer
)

// Step is one decision of the turn and the calls it made.
type Step struct {
	Text  string
	Calls []Call
}

// State is what a brain sees. Text that came from logs is already redacted
// and fenced.
type State struct {
	Goal     string        // the person's message, redacted
	History  []memory.Turn // recent turns of the thread, oldest first
	Summary  string        // summary of older turns
	Memories []string      // recalled long-term memories, one line each
	Files    []skills.File // attachments of the thread
	NewFiles []string      // names attached with this message
	Plan     string
	Progress []string // one line per step so far
	Notes    []string // agent notes (memories written, recurring incidents)
	Steps    []Step   // this turn's decisions and results
	Step     int      // 1-based number of the decision being asked for
	MaxSteps int
	Phase    Phase
	// MustAnswer, when set, says why no more skills may be called.
	MustAnswer string
	// Tools are the skills offered for this decision.
	Tools    []skills.Spec
	Platform string
	DM       bool
	// System is the rendered system prompt for this phase.
	System string
}

// Results returns every call made so far this turn, oldest first.
func (st *State) Results() []Call {
	var out []Call
	for _, s := range st.Steps {
		out = append(out, s.Calls...)
	}
	return out
}
