package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms/openai"

	"github.com/sleuth-bot/sleuth/agent/llmtest"
	"github.com/sleuth-bot/sleuth/skills"
)

// llmBrain points an LLM brain at a scripted server.
func llmBrain(t *testing.T, srv *llmtest.Server, mode string) *LLMBrain {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("test"), openai.WithModel("scripted"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLLM(LLMConfig{Model: m, Name: "scripted", Tools: mode, Timeout: 2 * time.Second, Retries: -1, Backoff: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func call(id, name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: name, Args: args}
}

func TestNewValidates(t *testing.T) {
	_, err := New(Config{})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("New(Config{}) = %v, want ErrConfig", err)
	}
	_, err = New(Config{Registry: &skills.Registry{}, Sessions: newMemSessions(t), PersonaFile: "/nonexistent/persona.md"})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("missing persona file: %v, want ErrConfig", err)
	}
}

func TestOfflineTriage(t *testing.T) {
	an, rd, kb, rep := triageSkills()
	h := newHarness(t, Config{}, an, rd, kb, rep)
	reply := h.run("what went wrong?", h.logFile("payments.log", paymentsLog))
	if len(an.Calls()) != 1 || len(kb.Calls()) != 1 || len(rep.Calls()) != 1 {
		t.Fatalf("calls: analyze %d kb %d report %d, want 1 each", len(an.Calls()), len(kb.Calls()), len(rep.Calls()))
	}
	// The KB is queried with the analysis' evidence.
	if !strings.Contains(string(kb.Calls()[0].Args), "Connection is not available") {
		t.Errorf("kb args = %s, want the top evidence", kb.Calls()[0].Args)
	}
	if !strings.Contains(reply.Text, "payments.log:4") {
		t.Errorf("reply lacks the first error line:\n%s", reply.Text)
	}
	if strings.Contains(reply.Text, "(unverified)") {
		t.Errorf("a correct citation was marked unverified:\n%s", reply.Text)
	}
	if !strings.Contains(reply.Text, "a model would give a fuller explanation") {
		t.Errorf("offline reply does not say so:\n%s", reply.Text)
	}
	if len(reply.Evidence) != 1 || !reply.Evidence[0].Verified || reply.Evidence[0].Line != 4 {
		t.Errorf("evidence = %+v", reply.Evidence)
	}
	if reply.Steps != 4 {
		t.Errorf("steps = %d, want 4 (3 calls + answer)", reply.Steps)
	}
	if len(reply.NextSteps) != 1 {
		t.Errorf("next steps = %q", reply.NextSteps)
	}
	if len(h.progress) != 3 || !strings.HasPrefix(h.progress[0], "step 1/3: analyzing payments.log") {
		t.Errorf("progress = %q", h.progress)
	}
	sess, _ := h.sessions.Get(context.Background(), "local/t1/c1/th1")
	if !strings.Contains(sess.Plan, "analyze-log") || sess.Status != "open" {
		t.Errorf("session plan %q status %q", sess.Plan, sess.Status)
	}
	turns, _ := h.sessions.Turns(context.Background(), "local/t1/c1/th1", 0)
	if len(turns) < 2 || turns[1].Role != "assistant" || len(turns[1].Fingerprints) != 1 {
		t.Fatalf("turns = %+v", turns)
	}
	// Without a model the incident is remembered as fingerprints + conclusion.
	if len(h.lt.recs) != 1 || h.lt.recs[0].Type != "incident" || h.lt.recs[0].Fingerprints[0] != "tmpl-payments.log" || h.lt.recs[0].Channel != "c1" {
		t.Fatalf("memories = %+v", h.lt.recs)
	}
	// Audit: one record per step, arguments recorded.
	recs := h.auditRecords()
	if len(recs) != 4 || recs[0].Skill != "analyze-log" || recs[0].ResultSHA256 == "" || recs[3].Action != "answer" {
		t.Fatalf("audit = %+v", recs)
	}

	// A follow-up in the same thread by intent.
	reply = h.run("around line 4")
	if len(rd.Calls()) != 1 || !strings.Contains(string(rd.Calls()[0].Args), `"line":4`) {
		t.Fatalf("read-log calls = %v", rd.Calls())
	}
	if !strings.Contains(reply.Text, "L4: 2024-05-01 02:00:10 ERROR") {
		t.Errorf("follow-up reply:\n%s", reply.Text)
	}
	reply = h.run("grep retrying")
	if !strings.Contains(reply.Text, "L6:") {
		t.Errorf("grep reply:\n%s", reply.Text)
	}
}

func TestLLMToolRoundTrip(t *testing.T) {
	an, rd, kb, rep := triageSkills()
	srv := llmtest.New(t,
		llmtest.Reply{Text: "1. analyze the log\n2. read around the first error\n3. answer", ToolCalls: []llmtest.ToolCall{call("call_a", "analyze-log", `{"file":"payments.log"}`)}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_b", "read-log", `{"file":"payments.log","line":"4"}`), call("call_c", "query-issue-kb", `{"query":"Connection is not available"}`)}},
		llmtest.Reply{Text: "The settlement export held the pool.\n\n- payments.log:2 \"settlement export started\"\n- payments.log:4 \"Connection is not available\"\n\nNext steps:\n- move the export off peak"},
		llmtest.Reply{Text: `{"memories":[{"scope":"channel","type":"incident","priority":3,"content":"settlement export exhausted the pool"}]}`},
	)
	h := newHarness(t, Config{Brain: llmBrain(t, srv, "")}, an, rd, kb, rep)
	reply := h.run("why did payments fail?", h.logFile("payments.log", paymentsLog))
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	for _, r := range reqs[:3] {
		if r.Stream {
			t.Error("tool turn was streamed")
		}
		if r.Temperature == nil || *r.Temperature != 0 {
			t.Errorf("temperature = %v, want 0", r.Temperature)
		}
	}
	// Request 3 carries one tool message per call with matching ids.
	var ids []string
	var assistantIDs []string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" {
			ids = append(ids, m.ToolCallID)
		}
		for _, tc := range m.ToolCalls {
			assistantIDs = append(assistantIDs, tc.ID)
		}
	}
	if strings.Join(ids, ",") != "call_a,call_b,call_c" || strings.Join(assistantIDs, ",") != "call_a,call_b,call_c" {
		t.Fatalf("tool ids = %v, assistant ids = %v", ids, assistantIDs)
	}
	// The string "4" was coerced to an integer.
	if got := string(rd.Calls()[0].Args); !strings.Contains(got, `"line":4`) {
		t.Errorf("read-log args = %s", got)
	}
	// Tool output is fenced as untrusted data.
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" && !strings.Contains(m.Content, "<<<untrusted-data from=analyze-log") {
			t.Errorf("tool output not fenced: %q", m.Content)
		}
	}
	// Persona by phase: workflow while planning, style afterwards.
	if !strings.Contains(reqs[0].System(), "## Workflow") || strings.Contains(reqs[0].System(), "## Output style") {
		t.Error("first prompt should carry the workflow, not the style")
	}
	if !strings.Contains(reqs[1].System(), "## Output style") || !strings.Contains(reqs[1].System(), "step 1/3: analyzing payments.log") {
		t.Errorf("second prompt lacks style or progress:\n%s", reqs[1].System())
	}
	if !strings.Contains(reqs[1].System(), "1. analyze the log") {
		t.Error("plan not shown in later prompts")
	}
	if reply.Tokens == 0 || reply.Steps != 3 {
		t.Errorf("tokens %d steps %d", reply.Tokens, reply.Steps)
	}
	if len(reply.Evidence) != 2 || !reply.Evidence[0].Verified || !reply.Evidence[1].Verified {
		t.Errorf("evidence = %+v", reply.Evidence)
	}
	if strings.Contains(reply.Text, "offline") {
		t.Errorf("model reply mentions offline:\n%s", reply.Text)
	}
	// Distilled memory written, fingerprints attached to the incident.
	if len(h.lt.recs) != 1 || h.lt.recs[0].Content != "settlement export exhausted the pool" || len(h.lt.recs[0].Fingerprints) != 1 {
		t.Fatalf("memories = %+v", h.lt.recs)
	}
	var args map[string]any
	for _, r := range h.auditRecords() {
		if r.Skill == "read-log" {
			json.Unmarshal(r.Args, &args)
		}
	}
	if args["file"] != "payments.log" {
		t.Errorf("audit args = %v", args)
	}
}
