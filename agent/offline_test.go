package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/analyzelog"
	"github.com/sleuth-bot/sleuth/skills/comparelogs"
	"github.com/sleuth-bot/sleuth/skills/remember"
	"github.com/sleuth-bot/sleuth/skills/searchmemory"
)

// nextCall asks the offline brain for its first decision on goal.
func nextCall(t *testing.T, st *State) (string, map[string]any) {
	t.Helper()
	act, err := NewOfflineBrain().Next(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(act.Calls) == 0 {
		return "", nil
	}
	var args map[string]any
	if err := json.Unmarshal(act.Calls[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	return act.Calls[0].Skill, args
}

func specsOf(list ...skills.Skill) []skills.Spec {
	out := make([]skills.Spec, len(list))
	for i, s := range list {
		out[i] = s.Spec()
	}
	return out
}

// Bug 1: "can you find out why?" is a triage request, not grep "out why?".
func TestOfflineSearchIntentsNeedADeliberatePhrase(t *testing.T) {
	an, rd, kb, rep := triageSkills()
	tools := specsOf(an, rd, kb, rep)
	cases := []struct {
		goal, skill, pattern string
	}{
		{"cart-api restarted with exit status 2, can you find out why?", "analyze-log", ""},
		{"find out what broke", "analyze-log", ""},
		{"grep timeout", "read-log", "timeout"},
		{"grep for \"connection reset\"", "read-log", "connection reset"},
		{"search for OOMKilled", "read-log", "OOMKilled"},
		{"can you search the log for deadline exceeded?", "read-log", "deadline exceeded"},
		{"find lines with HikariPool", "read-log", "HikariPool"},
		{"show me lines containing status=500", "read-log", "status=500"},
		{`find "ECONNRESET"`, "read-log", "ECONNRESET"},
		{"look for panic", "read-log", "panic"},
	}
	for _, c := range cases {
		st := &State{Goal: c.goal, Files: []skills.File{{Name: "app.log"}}, Tools: tools, Step: 1}
		skill, args := nextCall(t, st)
		if skill != c.skill {
			t.Errorf("%q: first call %s, want %s", c.goal, skill, c.skill)
			continue
		}
		if c.pattern != "" && args["pattern"] != c.pattern {
			t.Errorf("%q: pattern %q, want %q", c.goal, args["pattern"], c.pattern)
		}
	}
}

// Bugs 2 and 3: two logs are compared with compare-logs' own parameter
// names; the baseline is the log with fewer errors whatever the names
// and the attachment order, and the report is on the failing one.
func TestOfflineComparesTwoLogsFailingOneAsTarget(t *testing.T) {
	cmp, err := comparelogs.New(comparelogs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	skillsList := realSkills(t)
	skillsList = append(skillsList, cmp)
	h := newHarness(t, Config{}, skillsList...)
	red, _ := filepath.Abs(filepath.Join("testdata", "red.log"))
	green, _ := filepath.Abs(filepath.Join("testdata", "green.log"))
	// The failing log first: order must not decide.
	reply := h.run("why did it fail today?", bot.Attachment{Name: "red.log", Path: red}, bot.Attachment{Name: "green.log", Path: green})
	if reply.Failed {
		t.Fatalf("failed: %s", reply.Text)
	}
	var cmpArgs json.RawMessage
	for _, r := range h.auditRecords() {
		if r.Skill == "compare-logs" {
			if r.Status != "ok" {
				t.Errorf("compare-logs status %s", r.Status)
			}
			cmpArgs = r.Args
		}
	}
	var got struct{ Baseline, Target string }
	if err := json.Unmarshal(cmpArgs, &got); err != nil || got.Baseline != "green.log" || got.Target != "red.log" {
		t.Fatalf("compare-logs args %s, want baseline green.log, target red.log", cmpArgs)
	}
	if _, err := skills.ValidateArgs(cmp.Spec(), cmpArgs); err != nil {
		t.Errorf("compare-logs args do not validate: %v", err)
	}
	if !strings.Contains(reply.Text, "red.log: offline analysis") || !strings.Contains(reply.Text, "red.log is the failing run") {
		t.Errorf("the report is not on the failing log:\n%s", reply.Text)
	}
	if !regexp.MustCompile(`red\.log L(44|50)\b`).MatchString(reply.Text) {
		t.Errorf("reply cites neither the warning (L44) nor the first error (L50) of red.log:\n%s", reply.Text)
	}
	if strings.Contains(reply.Text, "(unverified)") {
		t.Errorf("unverified citations:\n%s", reply.Text)
	}
	if reply.Steps != 5 {
		t.Errorf("steps = %d, want 5 (two analyses, compare, report, answer; no knowledge base registered)", reply.Steps)
	}
}

// Bug 4: a history question in a new thread of the channel, with no
// attachment, is answered from long-term memory, not with the help text.
func TestOfflineAnswersHistoryFromMemory(t *testing.T) {
	an, rd, kb, rep := triageSkills()
	lt := &memLongTerm{}
	sm, err := searchmemory.New(searchmemory.Config{Store: lt})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Memory: lt}, an, rd, kb, rep, sm)
	h.run("payments timed out, why?", h.logFile("payments.log", paymentsLog))
	if len(lt.recs) == 0 {
		t.Fatal("the first turn remembered nothing")
	}
	if strings.Contains(lt.recs[0].Content, "payments.log:4") || regexp.MustCompile(`\bL\d+\b`).MatchString(lt.recs[0].Content) {
		t.Errorf("memory keeps line numbers of a thread's file: %q", lt.recs[0].Content)
	}
	for _, q := range []string{"have we seen this before?", "what was the cause of the last payments incident in this channel?"} {
		reply := h.runMsg(bot.Message{Platform: "local", Tenant: "t1", Channel: "c1", Thread: "later-" + q[:4], ID: "n-" + q[:4], User: "u2", Text: q})
		if strings.Contains(reply.Text, "Attach a log file") {
			t.Errorf("%q got the help text:\n%s", q, reply.Text)
		}
		if !strings.Contains(reply.Text, "Connection is not available") {
			t.Errorf("%q: reply lacks the remembered incident:\n%s", q, reply.Text)
		}
		if strings.Contains(reply.Text, "(unverified)") {
			t.Errorf("%q: reply has unverified citations:\n%s", q, reply.Text)
		}
	}
	// Another channel sees nothing and is told so.
	reply := h.runMsg(bot.Message{Platform: "local", Tenant: "t1", Channel: "c2", Thread: "x", ID: "x1", User: "u3", Text: "have we seen this before?"})
	if strings.Contains(reply.Text, "Connection is not available") || !strings.Contains(reply.Text, "I don't remember") {
		t.Errorf("other channel:\n%s", reply.Text)
	}
}

// Bug 5: a question about something the log never mentions is answered
// with "the log does not show it" and what the log does cover.
func TestOfflineSaysWhenTheLogCannotAnswer(t *testing.T) {
	h := newHarness(t, Config{}, realSkills(t)...)
	red, _ := filepath.Abs(filepath.Join("testdata", "red.log"))
	reply := h.run("which IAM user deleted the s3 bucket acme-invoices yesterday?", bot.Attachment{Name: "red.log", Path: red})
	if !strings.Contains(reply.Text, "I can't find anything about") || !strings.Contains(reply.Text, "does not show") {
		t.Fatalf("reply does not say the log cannot answer:\n%s", reply.Text)
	}
	if !strings.Contains(reply.Text, "What red.log does cover") || strings.Contains(reply.Text, "(unverified)") {
		t.Errorf("reply does not show what the log covers, verified:\n%s", reply.Text)
	}
	for _, r := range h.auditRecords() {
		if r.Skill == "generate-report" {
			t.Errorf("a report was written for an unanswerable question")
		}
	}

	// Generic questions never trigger the check.
	for _, q := range []string{"when did it start failing?", "which service failed first?", "where is the error?"} {
		if terms := lookupTerms(&State{Goal: q}); len(terms) > 0 {
			t.Errorf("%q: lookup terms %q, want none", q, terms)
		}
	}
	if got := searchStem("deleted") + searchStem("users") + searchStem("logged"); got != "deletuserlog" {
		t.Errorf("stems = %q", got)
	}

	// A specific question whose words the log has goes on to the triage.
	h = newHarness(t, Config{}, realSkills(t)...)
	reply = h.run("which ledger call timed out first?", bot.Attachment{Name: "red.log", Path: red})
	if strings.Contains(reply.Text, "can't find anything") || !strings.Contains(reply.Text, "Most likely cause") {
		t.Errorf("answerable question:\n%s", reply.Text)
	}
}

// Bug 6: the agent's saved outputs do not stop a bare L123 from resolving
// to the one attached log.
func TestEvidenceBareLineIgnoresSavedOutputs(t *testing.T) {
	dir := t.TempDir()
	h := &harness{t: t, dir: dir}
	app := h.logFile("app.log", "one\ntwo\nthree\n")
	out := h.logFile("output-step2-read-log.txt", "L1: one\nL2: two\n")
	files := []skills.File{{Name: "app.log", Path: app.Path}, {Name: "output-step2-read-log.txt", Path: out.Path}}
	a := &Agent{}
	got, ev := a.verifyEvidence(context.Background(), "The third line L3 `three` shows it.", files)
	if strings.Contains(got, "(unverified)") {
		t.Errorf("bare L3 marked unverified: %s", got)
	}
	if len(ev) != 1 || ev[0].File != "app.log" || !ev[0].Verified {
		t.Errorf("evidence = %+v", ev)
	}
	// Two real attachments: a bare line stays ambiguous.
	files = append(files, skills.File{Name: "b.log", Path: app.Path})
	got, _ = a.verifyEvidence(context.Background(), "L3 `three`", files)
	if !strings.Contains(got, "(unverified)") {
		t.Errorf("ambiguous bare line verified: %s", got)
	}
}

// Bug 7: quotes the agent renders verify: the engine's "…[+N chars]" cut
// becomes a plain "…", and quoteOf keeps exact text around "…".
func TestRenderedQuotesVerify(t *testing.T) {
	line := `2024/06/15 00:05:18 [error] 31#31: *1000 upstream SSL certificate verify error: (10:certificate has expired) while SSL handshaking to upstream, client: 10.0.2.226, server: api.acme.example, request: "GET /api/v2/rates HTTP/1.1", upstream: "https://10.0.9.4:8443/api/v2/rates"`
	h := &harness{t: t, dir: t.TempDir()}
	att := h.logFile("nginx.log", "start\n"+line+"\n")
	files := []skills.File{{Name: "nginx.log", Path: att.Path}}
	engineCut := string([]rune(line)[:250]) + "…[+35 chars]"
	answer := tidyCutMarkers("- nginx.log L2: `" + engineCut + "` — error")
	got, ev := (&Agent{}).verifyEvidence(context.Background(), answer, files)
	if strings.Contains(got, "(unverified)") || strings.Contains(got, "chars]") || len(ev) != 1 || !ev[0].Verified {
		t.Errorf("cut quote not verified: %s", got)
	}
	for _, text := range []string{line, "2024-06-23 02:02:20.852  INFO 1 --- [sched] c.a.Export : has a `tick` inside", "short", "\tindented line"} {
		q := quoteOf(text, 60)
		if !quoteMatches(q, text) {
			t.Errorf("quoteOf(%q) = %q does not match its line", text, q)
		}
		if strings.Contains(q, "`") {
			t.Errorf("quoteOf(%q) = %q contains a backtick", text, q)
		}
	}
}

// Bug 8: the conclusion leads with the earliest causal event, not the
// loudest symptom; the rules read the engine's reason tags only.
func TestReasonLeadsWithCause(t *testing.T) {
	ref := func(line int, text, why string) skills.LineRef {
		return skills.LineRef{File: "svc.log", Line: line, Text: text, Reason: why}
	}
	cases := []struct {
		name    string
		lines   []skills.LineRef
		changes []skills.LineRef
		cause   string
	}{
		{"exhaustion after a new event", []skills.LineRef{
			ref(1111, "OutOfMemoryError", "error; seen once; crash marker; last error before the end; known issue: out of memory"),
			ref(549, "Caused by: pool exhausted", "error; 34 times; root cause of the stack trace at L547; first error; known issue: resource pool exhausted"),
			ref(525, "job X started", "seen once; new 22 lines before the errors starting at L547"),
		}, nil, "svc.log L525"},
		{"root cause that is not an exhaustion", []skills.LineRef{
			ref(62, "Caused by: password authentication failed", "error; seen once; root cause of the stack trace at L49; first error"),
			ref(46, "server initialized", "seen once; new 3 lines before the errors starting at L49"),
			ref(48, "could not obtain connection", "warning; seen once; new 1 lines before the errors starting at L49"),
		}, nil, "svc.log L62"},
		{"generic wrapper", []skills.LineRef{
			ref(97, "Process completed with exit code 1.", "error; seen once; exit marker; first error; generic wrapper"),
			ref(93, "undefined: pgx.ErrTx", "seen once; new 4 lines before the errors starting at L97"),
		}, nil, "svc.log L93"},
		{"new warning before errors", []skills.LineRef{
			ref(220, "Guru Meditation Error", "error; seen once; crash marker; last error before the end"),
			ref(218, "fifo overflow", "error; seen once; first error"),
			ref(194, "ring buffer 70% full", "warning; 6 times; new 24 lines before the errors starting at L218"),
		}, nil, "svc.log L194"},
		{"known failure over noisy first error", []skills.LineRef{
			ref(12, "client canceled request", "error; 106 times; first error"),
			ref(703, "panic: nil pointer dereference", "error; seen once; crash marker; known issue: null dereference"),
		}, nil, "svc.log L703"},
		{"divergence from the good run", []skills.LineRef{
			ref(25, "query failed: deadline exceeded", "error; 144 times; first error; known issue: timeout"),
		}, []skills.LineRef{
			ref(2, "config: timeout=250ms (was 5s)", "divergence from the baseline"),
			ref(25, "query failed: deadline exceeded", "new template"),
		}, "svc.log L2"},
	}
	for _, c := range cases {
		r := reason(c.lines, c.changes)
		// The cause is the first line the conclusion cites.
		i := strings.Index(r.conclusion, c.cause)
		if !strings.HasPrefix(r.conclusion, "Most likely cause") || i < 0 || strings.Contains(r.conclusion[:i], "svc.log L") {
			t.Errorf("%s: conclusion does not lead with %s:\n%s", c.name, c.cause, r.conclusion)
		}
		if len(r.evidence) == 0 || key(r.evidence[0]) != strings.Replace(c.cause, " L", ":", 1) {
			t.Errorf("%s: evidence does not start with the cause: %+v", c.name, r.evidence)
		}
	}
}

// stripCitations drops line numbers but keeps file names.
func TestStripCitations(t *testing.T) {
	got := stripCitations("cause: app.log L12 `x` then L40 and app.log:7, version 1.2.3")
	if got != "cause: app.log `x` then and app.log, version 1.2.3" {
		t.Errorf("stripCitations = %q", got)
	}
}

// "remember that I …" is about the person: a user memory, a preference
// when it says what they like; other facts are the channel's.
func TestOfflineRememberScopesFirstPersonToTheUser(t *testing.T) {
	lt := &memLongTerm{}
	rem, err := remember.New(remember.Config{Store: lt})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Memory: lt, AllowSideEffects: []string{"remember"}}, rem)
	h.run("remember that I prefer short answers")
	h.run("remember that the staging DB listens on port 5433")
	if len(lt.recs) != 2 {
		t.Fatalf("remembered %d memories, want 2: %+v", len(lt.recs), lt.recs)
	}
	if r := lt.recs[0]; r.Scope != memory.ScopeUser || r.Type != memory.TypePreference || r.User != "u1" {
		t.Errorf("first-person preference stored as %s/%s for %q", r.Scope, r.Type, r.User)
	}
	if r := lt.recs[1]; r.Scope != memory.ScopeChannel || r.Type != memory.TypeFact {
		t.Errorf("channel fact stored as %s/%s", r.Scope, r.Type)
	}
}

// An attachment the engine refuses (empty, corrupt archive) is answered
// with the reason, not with a report on nothing.
func TestOfflineSaysWhyAnAttachmentWasNotAnalysed(t *testing.T) {
	_, rd, kb, rep := triageSkills()
	an, err := analyzelog.New(analyzelog.Config{}) // the real engine's input errors
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{}, an, rd, kb, rep)
	reply := h.run("why did it fail?", h.logFile("empty.log", ""))
	if !strings.Contains(reply.Text, "cannot analyse empty.log: the file is empty.") || strings.Contains(reply.Text, "tell the user") {
		t.Fatalf("reply does not say why:\n%s", reply.Text)
	}
	if strings.Contains(reply.Text, "no line that stands out") {
		t.Fatalf("reply reports on a file it could not read:\n%s", reply.Text)
	}
}
