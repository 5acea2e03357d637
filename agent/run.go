package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// run is the state of one turn.
type run struct {
	a     *Agent
	log   *slog.Logger // the agent's logger with this run's session and run id
	turn  bot.Turn
	sess  memory.Session
	key   string
	start time.Time

	brain    Brain
	fallback string // why the model was abandoned, "" when it was not

	files      []skills.File
	newFiles   []string
	rejected   []string
	workspace  string
	st         State
	redactions int
	tokens     int
	steps      int

	// guards
	seenCalls   map[string]int // canonical call -> step
	perSkill    map[string]int
	seenResults map[string]bool
	stale       int
	userAsked   string // the person's own words, lower-cased

	fingerprints []string
	lines        []skills.LineRef
	written      []string          // memories written this turn, as acknowledged
	savedOutputs map[string]string // sha256 of a full output -> its file name
	capHit       string
}

func (r *run) brainName() string {
	if r.brain == nil {
		return ""
	}
	return r.brain.Name()
}

func (r *run) do(ctx context.Context) (bot.Reply, error) {
	a := r.a
	m := r.turn.Message
	r.brain = a.cfg.Brain
	if r.brain == nil {
		r.brain = a.offline
	}
	r.seenCalls = map[string]int{}
	r.perSkill = map[string]int{}
	r.seenResults = map[string]bool{}
	r.userAsked = strings.ToLower(m.Text)

	ws, err := a.cfg.Sessions.Workspace(r.key)
	if err != nil {
		return bot.Reply{}, fmt.Errorf("session workspace: %w", err)
	}
	r.workspace = ws

	// History is read before this turn is appended.
	history, err := a.cfg.Sessions.Turns(ctx, r.key, 0)
	if err != nil {
		return bot.Reply{}, fmt.Errorf("load turns: %w", err)
	}
	if err := r.storeAttachments(ctx); err != nil {
		return bot.Reply{}, err
	}
	if len(m.Attachments) > 0 && len(r.newFiles) == 0 && len(r.rejected) > 0 {
		reply := bot.Reply{Text: strings.Join(r.rejected, "\n"), Failed: true}
		r.appendTurns(ctx, reply)
		return reply, nil
	}
	if err := r.loadFiles(ctx); err != nil {
		return bot.Reply{}, err
	}

	goal := redactText(m.Text, &r.redactions)
	if _, err := a.cfg.Sessions.AppendTurn(ctx, memory.Turn{
		Session: r.key, Role: "user", Content: goal, MessageID: m.ID, CreatedAt: r.start,
	}); err != nil {
		return bot.Reply{}, fmt.Errorf("append turn: %w", err)
	}

	summary, recent := r.summarize(ctx, history)
	r.st = State{
		Goal:     goal,
		History:  recent,
		Summary:  summary,
		Files:    r.files,
		NewFiles: r.newFiles,
		Plan:     r.sess.Plan,
		MaxSteps: a.cfg.MaxSteps,
		Platform: m.Platform,
		DM:       m.DM,
	}
	// A plan belongs to the request that made it; a new request with new
	// files or new words starts without one.
	if r.st.Plan != "" && !continues(goal) {
		r.st.Plan = ""
	}
	r.st.Memories = r.recall(ctx, goal)
	for _, rej := range r.rejected {
		r.st.Notes = append(r.st.Notes, rej)
	}

	answer, ask, err := r.loop(ctx)
	if err != nil {
		return bot.Reply{}, err
	}
	reply := r.finish(ctx, answer, ask)
	return reply, nil
}

// continues reports whether a message continues the previous request ("go
// on", "continue", "yes").
func continues(goal string) bool {
	g := strings.ToLower(strings.TrimSpace(goal))
	for _, w := range []string{"continue", "go on", "go ahead", "yes", "proceed", "next"} {
		if strings.HasPrefix(g, w) {
			return true
		}
	}
	return false
}

func (r *run) loadFiles(ctx context.Context) error {
	fs, err := r.a.cfg.Sessions.Files(ctx, r.key)
	if err != nil {
		return fmt.Errorf("list session files: %w", err)
	}
	r.files = r.files[:0]
	for _, f := range fs {
		r.files = append(r.files, skills.File{Name: f.Name, Path: f.Path, Size: f.Size})
	}
	return nil
}

func (r *run) env() skills.Env {
	m := r.turn.Message
	ch := m.Channel
	if m.DM {
		ch = ""
	}
	return skills.Env{
		SessionKey: r.key, Workspace: r.workspace, Platform: m.Platform, Tenant: m.Tenant,
		Channel: ch, User: m.User, DM: m.DM, Link: m.Link, Files: append([]skills.File(nil), r.files...),
	}
}

// finish applies the evidence guardrail, notes recurring incidents and the
// fallback, and writes the turn and memories.
func (r *run) finish(ctx context.Context, answer string, ask bool) bot.Reply {
	answer = tidyCutMarkers(redactText(answer, &r.redactions))
	checked, evidence := r.a.verifyEvidence(ctx, answer, r.files)
	text := checked
	if r.capHit != "" && !ask {
		text = "_" + r.capHit + " This answer is partial._\n\n" + text
	}
	if len(r.rejected) > 0 {
		text = strings.Join(r.rejected, "\n") + "\n\n" + text
	}
	for _, n := range r.st.Notes {
		if strings.HasPrefix(n, recurringPrefix) && !strings.Contains(strings.ToLower(answer), "seen ") {
			text += "\n\n_This error pattern was seen " + strings.TrimPrefix(n, recurringPrefix) + "_"
		}
	}
	if r.brain.Name() == offlineName {
		if r.fallback != "" {
			text += "\n\n_The language model failed (" + r.fallback + "), so this answer comes from the offline analysis; a working model would give a fuller explanation._"
		} else if !ask {
			text += "\n\n_Offline analysis: no language model is configured; a model would give a fuller explanation._"
		}
	}
	reply := bot.Reply{
		Text:      strings.TrimSpace(text),
		Evidence:  evidence,
		NextSteps: nextSteps(answer),
		Steps:     r.steps,
		Tokens:    r.tokens,
	}
	r.writeMemories(ctx, answer)
	r.appendTurns(ctx, reply)
	if r.a.audit != nil {
		r.a.audit.write(auditRecord{
			Time: r.a.cfg.Clock().UTC(), Session: r.key, Step: r.steps, Action: map[bool]string{true: "ask", false: "answer"}[ask],
			Status: "ok", ResultBytes: len(reply.Text), ResultSHA256: sha(reply.Text),
			Tokens: r.tokens, Redactions: r.redactions, Brain: r.brain.Name(), Fallback: r.fallback,
			DurationMS: r.a.cfg.Clock().Sub(r.start).Milliseconds(),
		})
	}
	return reply
}

func (r *run) appendTurns(ctx context.Context, reply bot.Reply) {
	fps := uniq(r.fingerprints)
	sort.Strings(fps)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := r.a.cfg.Sessions.AppendTurn(wctx, memory.Turn{
		Session: r.key, Role: "assistant", Content: reply.Text, Fingerprints: fps,
		Tokens: reply.Tokens, Steps: reply.Steps, Failed: reply.Failed, CreatedAt: r.a.cfg.Clock(),
	}); err != nil {
		r.log.Warn("append assistant turn", "error", err)
	}
	if len(r.written) > 0 {
		note := "remembered: " + strings.Join(r.written, "; ")
		if _, err := r.a.cfg.Sessions.AppendTurn(wctx, memory.Turn{
			Session: r.key, Role: "system", Content: note, CreatedAt: r.a.cfg.Clock(),
		}); err != nil {
			r.log.Warn("append memory note", "error", err)
		}
	}
}

// nextSteps extracts the bullets under a "next steps" heading.
func nextSteps(answer string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(answer, "\n") {
		t := strings.TrimSpace(line)
		l := strings.ToLower(strings.Trim(t, "#*_: "))
		if strings.HasPrefix(l, "next step") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if t == "" {
			if len(out) > 0 {
				break
			}
			continue
		}
		if item, ok := bullet(t); ok {
			out = append(out, item)
		} else if len(out) > 0 {
			break
		}
	}
	return out
}

func bullet(t string) (string, bool) {
	for _, p := range []string{"- ", "* ", "• "} {
		if strings.HasPrefix(t, p) {
			return strings.TrimSpace(t[len(p):]), true
		}
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return strings.TrimSpace(t[i+2:]), true
	}
	return "", false
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
