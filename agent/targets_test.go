package agent

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/agent/llmtest"
	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/analyzelog"
	"github.com/sleuth-bot/sleuth/skills/generatereport"
	"github.com/sleuth-bot/sleuth/skills/readlog"
)

// realSkills are the built-in log skills on the real engine.
func realSkills(t testing.TB) []skills.Skill {
	t.Helper()
	an, err := analyzelog.New(analyzelog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := readlog.New(readlog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := generatereport.New(generatereport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return []skills.Skill{an, rd, rep}
}

// TestOfflineOnSharedSamples runs the offline brain end to end on the
// shared samples; the cause lines their README names must be in the reply.
func TestOfflineOnSharedSamples(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "logs", "samples")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not found at %s: %v", dir, err)
	}
	cases := map[string][]string{
		"esp32-uart.log":       {"199", "418"},
		"payments-service.log": {"525", "549", "1111"},
	}
	// The cause the README names, which the conclusion must lead with
	// (not the last symptom).
	causes := map[string]string{"esp32-uart.log": "199", "payments-service.log": "525"}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{}, realSkills(t)...)
			abs, _ := filepath.Abs(filepath.Join(dir, name))
			reply := h.run("what went wrong?", bot.Attachment{Name: name, Path: abs})
			if reply.Failed {
				t.Fatalf("failed: %s", reply.Text)
			}
			for _, w := range want {
				if !strings.Contains(reply.Text, name+":"+w) && !strings.Contains(reply.Text, name+" L"+w) {
					t.Errorf("reply lacks %s line %s", name, w)
				}
				verified := false
				for _, e := range reply.Evidence {
					verified = verified || (e.File == name && fmt.Sprint(e.Line) == w && e.Verified)
				}
				if !verified {
					t.Errorf("line %s is not verified evidence", w)
				}
			}
			if strings.Contains(reply.Text, "(unverified)") {
				t.Errorf("offline reply has unverified citations")
			}
			lead := ""
			for _, l := range strings.Split(reply.Text, "\n") {
				if strings.Contains(l, "Most likely cause") {
					lead = l
					break
				}
			}
			if !strings.Contains(lead, name+" L"+causes[name]+" ") {
				t.Errorf("the conclusion does not lead with the cause at line %s: %q", causes[name], lead)
			}
			if t.Failed() {
				t.Logf("reply:\n%s", reply.Text)
			}
		})
	}
}

// TestPromptStaysSmallFor100MB: the prompts sent for a 100 MB attachment
// stay under 8,000 tokens (bytes/4) each.
func TestPromptStaysSmallFor100MB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	h := newHarness(t, Config{}, realSkills(t)...)
	path := filepath.Join(h.dir, "huge.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	size := 0
	for i := 0; size < 100<<20; i++ {
		var n int
		switch {
		case i%5000 == 4999:
			n, _ = fmt.Fprintf(w, "2024-05-01 10:%02d:%02d ERROR db pool exhausted: Connection is not available, request %d timed out after 30000ms password=s3cr3tvalue%d\n", (i/60)%60, i%60, i, i)
		default:
			n, _ = fmt.Fprintf(w, "2024-05-01 10:%02d:%02d INFO  request %d served in %d ms user=u%d path=/api/v1/items/%d\n", (i/60)%60, i%60, i, i%300, i%977, i)
		}
		size += n
	}
	w.Flush()
	f.Close()

	srv := llmtest.New(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("a", "analyze-log", `{"file":"huge.log"}`)}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("b", "read-log", `{"file":"huge.log","pattern":"ERROR","max_lines":500}`)}},
		llmtest.Reply{Text: "The db pool is exhausted."},
		llmtest.Reply{Text: `{"memories":[]}`},
	)
	h.agent.cfg.Brain = llmBrain(t, srv, "")
	h.run("why is it slow?", bot.Attachment{Name: "huge.log", Path: path})
	maxTokens := 0
	for i, r := range srv.Requests() {
		tok := r.EstimatedTokens()
		maxTokens = max(maxTokens, tok)
		if strings.Contains(string(r.Body), "s3cr3tvalue") {
			t.Errorf("request %d carries a secret", i)
		}
	}
	t.Logf("largest prompt for a %d MB attachment: %d tokens (bytes/4)", size>>20, maxTokens)
	if maxTokens >= 8000 {
		t.Errorf("largest prompt = %d tokens, want < 8000", maxTokens)
	}
}

// stepBrain calls a cached skill for a fixed number of steps, then answers.
type stepBrain struct{ steps int }

func (b stepBrain) Name() string { return "bench" }
func (b stepBrain) Next(_ context.Context, st *State) (Action, error) {
	if st.Step > b.steps || st.MustAnswer != "" {
		return Action{Text: "done at payments.log:4 \"Connection is not available\""}, nil
	}
	return Action{Calls: []Call{{Skill: "read-log", Args: []byte(fmt.Sprintf(`{"file":"payments.log","line":%d}`, st.Step))}}}, nil
}

// BenchmarkStep measures the agent's own work per step (guards, redaction,
// capping, prompt rendering, audit, session writes), excluding the model:
// the brain is in-process and the skill returns a cached result.
func BenchmarkStep(b *testing.B) {
	const steps = 6
	cached := strings.Repeat("L12: 2024-05-01 02:00:10 ERROR Connection is not available, request timed out after 30000ms\n", 40)
	rd := newFake("read-log", fileParams, func(c skills.Call) (skills.Result, error) {
		return skills.Result{Status: skills.StatusOK, Output: cached}, nil
	})
	reg, _ := skills.NewRegistry(rd)
	sessions := newMemSessions(b)
	dir := b.TempDir()
	a, err := New(Config{Registry: reg, Sessions: sessions, Brain: stepBrain{steps: steps}, MaxSteps: 8, MaxCallsPerSkill: 8,
		AuditDir: filepath.Join(dir, "audit"), Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	p := filepath.Join(dir, "payments.log")
	os.WriteFile(p, []byte(paymentsLog), 0o600)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := bot.Message{Platform: "local", Tenant: "t", Channel: "c", Thread: fmt.Sprint(i), ID: fmt.Sprint(i), User: "u", Text: "look"}
		turn := bot.Turn{Message: m, SessionKey: m.SessionKey(), Progress: func(string) {}}
		turn.Message.Attachments = []bot.Attachment{{Name: "payments.log", Path: p}}
		if _, err := a.Run(context.Background(), turn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(steps+1))/1e6, "ms/step")
}
