package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// Tool modes of the LLM brain.
const (
	ToolsNative = "native" // provider tool calling
	ToolsJSON   = "json"   // a JSON action in the message text
)

// Errors of the LLM brain.
var (
	// ErrNoModel reports that no model is configured (the offline brain runs).
	ErrNoModel = errors.New("no language model configured")
	// ErrBadAction reports a model reply that could not be understood even
	// after repair and one retry.
	ErrBadAction = errors.New("model reply is not a usable action")
)

// LLMConfig configures an LLMBrain.
type LLMConfig struct {
	// Model is the langchaingo model. Required.
	Model llms.Model
	// Name labels the brain in logs and audit ("openai:gpt-4o-mini"). Optional.
	Name string
	// Tools is ToolsNative (default) or ToolsJSON for models without tool calling.
	Tools string
	// Timeout bounds one model request; 0 means 60 s.
	Timeout time.Duration
	// Retries is how many times a failed request (429, 5xx, timeout,
	// network) is retried; 0 means 2, negative means none.
	Retries int
	// Backoff is the first retry delay, doubled each retry; 0 means 1 s.
	Backoff time.Duration
	// MaxTokens caps a completion; 0 means 1500.
	MaxTokens int
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// LLMBrain decides with a language model through langchaingo. Tool turns
// are never streamed; each tool result is its own message carrying the
// tool_call_id of its call; temperature is 0. Safe for concurrent use: it
// keeps no per-turn state.
type LLMBrain struct {
	cfg LLMConfig
	log *slog.Logger
}

// NewLLM validates cfg and returns the brain.
func NewLLM(cfg LLMConfig) (*LLMBrain, error) {
	if cfg.Model == nil {
		return nil, fmt.Errorf("%w: LLMConfig.Model is required", ErrConfig)
	}
	switch cfg.Tools {
	case "":
		cfg.Tools = ToolsNative
	case ToolsNative, ToolsJSON:
	default:
		return nil, fmt.Errorf("%w: tool mode %q (want %q or %q)", ErrConfig, cfg.Tools, ToolsNative, ToolsJSON)
	}
	if cfg.Name == "" {
		cfg.Name = "llm"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 1500
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &LLMBrain{cfg: cfg, log: cfg.Logger.With("component", "llm")}, nil
}

// NewLLMFromEnv builds the brain from the environment:
//
//	LLM_PROVIDER  openai (default; any OpenAI-compatible endpoint), ollama, anthropic
//	LLM_BASE_URL  endpoint, e.g. http://localhost:11434/v1 (optional for openai and anthropic)
//	LLM_MODEL     model name (required)
//	LLM_API_KEY   key; keyless endpoints get a dummy, as langchaingo requires one
//	LLM_TIMEOUT   per request, a Go duration (default 60s)
//	LLM_TOOLS     native (default) or json (models without tool calling)
//
// It returns ErrNoModel when none of LLM_PROVIDER, LLM_BASE_URL and
// LLM_MODEL is set.
func NewLLMFromEnv(getenv func(string) string, logger *slog.Logger) (*LLMBrain, error) {
	provider := strings.ToLower(strings.TrimSpace(getenv("LLM_PROVIDER")))
	base := strings.TrimSpace(getenv("LLM_BASE_URL"))
	model := strings.TrimSpace(getenv("LLM_MODEL"))
	key := getenv("LLM_API_KEY")
	if provider == "" && base == "" && model == "" {
		return nil, ErrNoModel
	}
	if model == "" {
		return nil, fmt.Errorf("%w: LLM_MODEL is required when a model is configured", ErrConfig)
	}
	timeout := 60 * time.Second
	if s := getenv("LLM_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: LLM_TIMEOUT=%q is not a positive duration like 60s", ErrConfig, s)
		}
		timeout = d
	}
	// The per-request timeout is applied by the brain; the client only
	// needs a generous overall bound.
	hc := &http.Client{Timeout: timeout + 5*time.Second}
	var (
		m   llms.Model
		err error
	)
	switch provider {
	case "", "openai", "openai-compatible":
		provider = "openai"
		if key == "" {
			key = "sk-no-key" // langchaingo refuses an empty token, keyless endpoints ignore it
		}
		opts := []openai.Option{openai.WithModel(model), openai.WithToken(key), openai.WithHTTPClient(hc)}
		if base != "" {
			opts = append(opts, openai.WithBaseURL(base))
		}
		m, err = openai.New(opts...)
	case "ollama":
		opts := []ollama.Option{ollama.WithModel(model), ollama.WithHTTPClient(hc)}
		if base != "" {
			opts = append(opts, ollama.WithServerURL(strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1")))
		}
		m, err = ollama.New(opts...)
	case "anthropic":
		if key == "" {
			return nil, fmt.Errorf("%w: LLM_API_KEY is required for anthropic", ErrConfig)
		}
		opts := []anthropic.Option{anthropic.WithModel(model), anthropic.WithToken(key), anthropic.WithHTTPClient(hc)}
		if base != "" {
			opts = append(opts, anthropic.WithBaseURL(base))
		}
		m, err = anthropic.New(opts...)
	default:
		return nil, fmt.Errorf("%w: LLM_PROVIDER=%q (want openai, ollama or anthropic)", ErrConfig, provider)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s model: %w", ErrConfig, provider, err)
	}
	return NewLLM(LLMConfig{Model: m, Name: provider + ":" + model, Tools: strings.ToLower(getenv("LLM_TOOLS")), Timeout: timeout, Logger: logger})
}

// Name implements Brain.
func (b *LLMBrain) Name() string { return b.cfg.Name }

// Next implements Brain.
func (b *LLMBrain) Next(ctx context.Context, st *State) (Action, error) {
	if b.cfg.Tools == ToolsJSON {
		return b.nextJSON(ctx, st)
	}
	msgs := b.messages(st, false)
	opts := []llms.CallOption{llms.WithTemperature(0), llms.WithMaxTokens(b.cfg.MaxTokens)}
	if len(st.Tools) > 0 {
		opts = append(opts, llms.WithTools(toolsOf(st.Tools)))
		if st.MustAnswer != "" {
			opts = append(opts, llms.WithToolChoice("none"))
		}
	}
	var act Action
	for attempt := 0; attempt < 2; attempt++ {
		resp, pt, ct, err := b.generate(ctx, msgs, opts...)
		act.PromptTokens += pt
		act.CompletionTokens += ct
		if err != nil {
			return act, err
		}
		ch := resp.Choices[0]
		act.Text = ch.Content
		for _, tc := range ch.ToolCalls {
			if tc.FunctionCall == nil {
				continue
			}
			act.Calls = append(act.Calls, Call{ID: tc.ID, Skill: tc.FunctionCall.Name, Args: json.RawMessage(tc.FunctionCall.Arguments)})
		}
		if len(act.Calls) > 0 || strings.TrimSpace(act.Text) != "" {
			act.Ask = len(act.Calls) == 0 && isQuestion(act.Text)
			return act, nil
		}
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, "Your reply was empty. Call a skill or answer."))
	}
	return act, fmt.Errorf("%w: empty replies", ErrBadAction)
}

// isQuestion: an answer that is only a question to the person.
func isQuestion(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasSuffix(s, "?") && !strings.Contains(s, "\n\n")
}

func toolsOf(specs []skills.Spec) []llms.Tool {
	out := make([]llms.Tool, 0, len(specs))
	for _, s := range specs {
		desc := s.Description
		if s.WhenToUse != "" {
			desc += " When to use: " + s.WhenToUse
		}
		out = append(out, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: s.Name, Description: desc, Parameters: schemaOf(s),
		}})
	}
	return out
}

// messages renders the state as a conversation. In JSON mode calls and
// results travel as text; in native mode as tool calls and one tool
// message per call, with matching ids.
func (b *LLMBrain) messages(st *State, jsonMode bool) []llms.MessageContent {
	system := st.System
	if jsonMode {
		system += "\n\n" + render("json_mode.md", st.Tools)
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, system)}
	for _, t := range st.History {
		switch t.Role {
		case "user":
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, t.Content))
		case "assistant":
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, t.Content))
		default:
			// Agent notes ("remembered: …") join the previous message so
			// roles keep alternating.
			if n := len(msgs); n > 1 {
				msgs[n-1].Parts = append(msgs[n-1].Parts, llms.TextPart("[sleuth: "+t.Content+"]"))
			}
		}
	}
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, st.Goal))
	for _, step := range st.Steps {
		if jsonMode {
			calls := make([]map[string]any, 0, len(step.Calls))
			for _, c := range step.Calls {
				calls = append(calls, map[string]any{"skill": c.Skill, "args": rawOrString(c.Args)})
			}
			a, _ := json.Marshal(map[string]any{"action": "call", "calls": calls})
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeAI, string(a)))
			var res strings.Builder
			for i, c := range step.Calls {
				fmt.Fprintf(&res, "Result %d (%s):\n%s\n\n", i+1, c.Skill, c.Output)
			}
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, strings.TrimSpace(res.String())))
			continue
		}
		ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		if strings.TrimSpace(step.Text) != "" {
			ai.Parts = append(ai.Parts, llms.TextPart(step.Text))
		}
		for _, c := range step.Calls {
			ai.Parts = append(ai.Parts, llms.ToolCall{ID: c.ID, Type: "function",
				FunctionCall: &llms.FunctionCall{Name: c.Skill, Arguments: string(c.Args)}})
		}
		msgs = append(msgs, ai)
		for _, c := range step.Calls {
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: c.ID, Name: c.Skill, Content: c.Output},
			}})
		}
	}
	if st.MustAnswer != "" && len(st.Steps) > 0 {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, "[sleuth: "+st.MustAnswer+" Answer now without calling skills.]"))
	}
	return msgs
}

func rawOrString(raw json.RawMessage) any {
	if json.Valid(raw) {
		return raw
	}
	return string(raw)
}

// nextJSON asks for a JSON action, repairs it, and retries once.
func (b *LLMBrain) nextJSON(ctx context.Context, st *State) (Action, error) {
	msgs := b.messages(st, true)
	opts := []llms.CallOption{llms.WithTemperature(0), llms.WithMaxTokens(b.cfg.MaxTokens)}
	var act Action
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		resp, pt, ct, err := b.generate(ctx, msgs, opts...)
		act.PromptTokens += pt
		act.CompletionTokens += ct
		if err != nil {
			return act, err
		}
		text := resp.Choices[0].Content
		parsed, perr := parseJSONAction(text)
		if perr == nil {
			if st.MustAnswer != "" && len(parsed.Calls) > 0 {
				parsed.Calls = nil
				parsed.Text = ""
			}
			parsed.PromptTokens, parsed.CompletionTokens = act.PromptTokens, act.CompletionTokens
			return parsed, nil
		}
		lastErr = perr
		runLog(ctx, b.log).Debug("model reply is not a JSON action; asking again", "error", perr)
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeAI, truncate(text, 2000)),
			llms.TextParts(llms.ChatMessageTypeHuman, "That reply was not a valid JSON action ("+perr.Error()+"). Reply with exactly one JSON object as described, nothing else."))
	}
	return act, fmt.Errorf("%w: %v", ErrBadAction, lastErr)
}

type jsonAction struct {
	Action string `json:"action"`
	Plan   string `json:"plan"`
	Text   string `json:"text"`
	Calls  []struct {
		Skill string          `json:"skill"`
		Name  string          `json:"name"`
		Args  json.RawMessage `json:"args"`
	} `json:"calls"`
	// Single-call shorthand: {"action":"call","skill":"x","args":{}}.
	Skill string          `json:"skill"`
	Args  json.RawMessage `json:"args"`
}

// parseJSONAction reads a JSON action, repairing common damage: code
// fences, prose around the object, trailing commas, single quotes.
func parseJSONAction(text string) (Action, error) {
	var ja jsonAction
	if err := json.Unmarshal([]byte(repairJSON(text)), &ja); err != nil {
		return Action{}, err
	}
	switch strings.ToLower(ja.Action) {
	case "call", "calls", "tool", "use":
		act := Action{Text: ja.Plan}
		for _, c := range ja.Calls {
			name := c.Skill
			if name == "" {
				name = c.Name
			}
			act.Calls = append(act.Calls, Call{Skill: name, Args: c.Args})
		}
		if ja.Skill != "" {
			act.Calls = append(act.Calls, Call{Skill: ja.Skill, Args: ja.Args})
		}
		if len(act.Calls) == 0 {
			return Action{}, errors.New(`"call" without calls`)
		}
		return act, nil
	case "answer", "reply", "final":
		if strings.TrimSpace(ja.Text) == "" {
			return Action{}, errors.New(`"answer" without text`)
		}
		return Action{Text: ja.Text, Ask: false}, nil
	case "ask", "question":
		if strings.TrimSpace(ja.Text) == "" {
			return Action{}, errors.New(`"ask" without text`)
		}
		return Action{Text: ja.Text, Ask: true}, nil
	}
	return Action{}, fmt.Errorf("unknown action %q", ja.Action)
}

var (
	fenceRE         = regexp.MustCompile("(?s)```(?:json)?\\s*(.*?)```")
	trailingCommaRE = regexp.MustCompile(`,\s*([}\]])`)
)

// repairJSON extracts the outermost JSON object of text and fixes trailing
// commas and single-quoted strings.
func repairJSON(text string) string {
	if m := fenceRE.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	if i := strings.IndexByte(text, '{'); i >= 0 {
		text = text[i:]
	}
	text = balance(text)
	text = trailingCommaRE.ReplaceAllString(text, "$1")
	if !json.Valid([]byte(text)) && strings.Contains(text, "'") && !strings.Contains(text, `"`) {
		text = strings.ReplaceAll(text, "'", `"`)
	}
	return text
}

// balance cuts text after the brace that closes the first one, or closes
// the braces a truncated reply left open.
func balance(text string) string {
	depth := 0
	inStr, esc := false, false
	var stack []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
			stack = append(stack, map[byte]byte{'{': '}', '[': ']'}[c])
		case '}', ']':
			depth--
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if depth == 0 {
				return text[:i+1]
			}
		}
	}
	if inStr {
		text += `"`
	}
	for i := len(stack) - 1; i >= 0; i-- {
		text += string(stack[i])
	}
	return text
}

var statusRE = regexp.MustCompile(`status code:? (\d{3})`)

// generate calls the model with a per-request timeout, retrying 429, 5xx,
// timeouts and network errors with exponential backoff.
func (b *LLMBrain) generate(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, int, int, error) {
	var lastErr error
	delay := b.cfg.Backoff
	pt, ct := 0, 0
	for attempt := 0; attempt <= b.cfg.Retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, pt, ct, ctx.Err()
			case <-t.C:
			}
			delay *= 2
		}
		actx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
		start := time.Now()
		resp, err := b.cfg.Model.GenerateContent(actx, msgs, opts...)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil && (resp == nil || len(resp.Choices) == 0) {
			err = errors.New("model returned no choices")
		}
		if err != nil {
			metrics.ModelLatency.WithLabelValues("error").Observe(time.Since(start).Seconds())
			if ctx.Err() != nil {
				return nil, pt, ct, ctx.Err()
			}
			if timedOut {
				err = fmt.Errorf("model request timed out after %s: %w", b.cfg.Timeout, err)
			}
			lastErr = err
			if !timedOut && !retryable(err) {
				break
			}
			if attempt < b.cfg.Retries {
				runLog(ctx, b.log).Warn("model request failed; retrying", "attempt", attempt+1, "error", err)
			}
			continue
		}
		metrics.ModelLatency.WithLabelValues("ok").Observe(time.Since(start).Seconds())
		p, c := usage(resp.Choices[0].GenerationInfo)
		if p == 0 && c == 0 {
			p, c = estimateTokens(msgs), len(resp.Choices[0].Content)/4+1
		}
		pt += p
		ct += c
		metrics.ModelTokens.WithLabelValues("prompt").Add(float64(p))
		metrics.ModelTokens.WithLabelValues("completion").Add(float64(c))
		return resp, pt, ct, nil
	}
	return nil, pt, ct, lastErr
}

// retryable: rate limits, server errors and network failures.
func retryable(err error) bool {
	if m := statusRE.FindStringSubmatch(err.Error()); m != nil {
		code, _ := strconv.Atoi(m[1])
		return code == http.StatusTooManyRequests || code >= 500
	}
	s := strings.ToLower(err.Error())
	for _, w := range []string{"rate limit", "overloaded", "connection refused", "connection reset", "eof", "timeout", "unavailable"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func usage(info map[string]any) (int, int) {
	get := func(keys ...string) int {
		for _, k := range keys {
			switch v := info[k].(type) {
			case int:
				return v
			case int64:
				return int(v)
			case float64:
				return int(v)
			}
		}
		return 0
	}
	return get("PromptTokens", "InputTokens", "prompt_tokens"), get("CompletionTokens", "OutputTokens", "completion_tokens")
}

// estimateTokens is chars/4 over the messages.
func estimateTokens(msgs []llms.MessageContent) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch t := p.(type) {
			case llms.TextContent:
				n += len(t.Text)
			case llms.ToolCallResponse:
				n += len(t.Content)
			case llms.ToolCall:
				if t.FunctionCall != nil {
					n += len(t.FunctionCall.Arguments)
				}
			}
		}
	}
	return n/4 + 1
}

// Summarize implements Summarizer.
func (b *LLMBrain) Summarize(ctx context.Context, previous string, turns []memory.Turn) (string, int, error) {
	prompt := render("summarize.md", map[string]any{"Previous": previous, "Turns": turns})
	resp, pt, ct, err := b.generate(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)},
		llms.WithTemperature(0), llms.WithMaxTokens(600))
	if err != nil {
		return "", pt + ct, err
	}
	return resp.Choices[0].Content, pt + ct, nil
}

// Distill implements Distiller.
func (b *LLMBrain) Distill(ctx context.Context, goal, answer string) ([]skills.Memory, int, error) {
	prompt := render("distill.md", map[string]any{"Goal": goal, "Answer": truncate(answer, 4000)})
	resp, pt, ct, err := b.generate(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)},
		llms.WithTemperature(0), llms.WithMaxTokens(400))
	if err != nil {
		return nil, pt + ct, err
	}
	var out struct {
		Memories []skills.Memory `json:"memories"`
	}
	if err := json.Unmarshal([]byte(repairJSON(resp.Choices[0].Content)), &out); err != nil {
		return nil, pt + ct, fmt.Errorf("%w: distilled memories: %v", ErrBadAction, err)
	}
	var mems []skills.Memory
	for _, m := range out.Memories {
		if strings.TrimSpace(m.Content) == "" || m.Type == memory.TypeTaskResult && m.Priority < 1 {
			continue
		}
		mems = append(mems, m)
		if len(mems) == 3 {
			break
		}
	}
	return mems, pt + ct, nil
}

// Narrate writes a short narrative on top of a structured digest (the
// jobs' daily-digest Narrator). The digest is data in the prompt.
func (b *LLMBrain) Narrate(ctx context.Context, digest string) (string, error) {
	prompt := render("narrate.md", map[string]any{"Digest": truncate(digest, 6000)})
	resp, _, _, err := b.generate(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)},
		llms.WithTemperature(0), llms.WithMaxTokens(300))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(resp.Choices[0].Content), nil
}
