package agent

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// Budgets of memory text in a prompt (characters; about 4 per token).
const (
	maxMemoryChars   = 3200 // ~800 tokens: memory adds < 1,000 tokens per turn
	maxSummaryChars  = 2400
	recallLimit      = 5
	recallMinPrio    = 1 // priority-0 memories stay out of the prompt
	summaryMarkerFmt = "<!-- covers turns through %d -->\n"
	recurringPrefix  = "this error pattern was seen "
)

// summarize returns the thread summary and the recent turns shown
// verbatim. When older turns fall out of the window they are folded into
// the summary: by the brain when it can summarise, as a rolling extract
// otherwise. The summary records the last turn it covers.
func (r *run) summarize(ctx context.Context, history []memory.Turn) (string, []memory.Turn) {
	a := r.a
	through, summary := splitSummary(r.sess.Summary)
	window := a.cfg.HistoryTurns
	if len(history) <= window {
		return summary, redactTurns(history, &r.redactions)
	}
	older, recent := history[:len(history)-window], history[len(history)-window:]
	var fold []memory.Turn
	for _, t := range older {
		if t.ID > through {
			fold = append(fold, t)
		}
	}
	if len(fold) == 0 {
		return summary, redactTurns(recent, &r.redactions)
	}
	fold = redactTurns(fold, &r.redactions)
	var next string
	if s, ok := r.brain.(Summarizer); ok {
		out, tokens, err := s.Summarize(ctx, summary, fold)
		r.tokens += tokens
		if err != nil {
			r.log.Warn("summarize thread with the model; keeping an extract", "error", err)
		} else {
			next = strings.TrimSpace(out)
		}
	}
	if next == "" {
		next = rollingExtract(summary, fold)
	}
	next = truncateHead(next, maxSummaryChars)
	last := fold[len(fold)-1].ID
	if err := a.cfg.Sessions.SetSummary(ctx, r.key, fmt.Sprintf(summaryMarkerFmt, last)+next); err != nil {
		r.log.Warn("save summary", "error", err)
	}
	return next, redactTurns(recent, &r.redactions)
}

func splitSummary(s string) (int64, string) {
	if !strings.HasPrefix(s, "<!-- covers turns through ") {
		return 0, s
	}
	end := strings.Index(s, " -->\n")
	if end < 0 {
		return 0, s
	}
	n, _ := strconv.ParseInt(s[len("<!-- covers turns through "):end], 10, 64)
	return n, s[end+len(" -->\n"):]
}

// rollingExtract keeps the first line of each folded turn, newest last.
func rollingExtract(prev string, turns []memory.Turn) string {
	var b strings.Builder
	if prev != "" {
		b.WriteString(prev)
		b.WriteString("\n")
	}
	for _, t := range turns {
		if t.Role == "system" {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", t.Role, truncate(firstLine(t.Content), 160))
	}
	return strings.TrimSpace(b.String())
}

// truncateHead keeps the end of s (the newest part) within n bytes.
func truncateHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	if i := strings.IndexByte(s[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	return "…\n" + s[cut:]
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func redactTurns(in []memory.Turn, n *int) []memory.Turn {
	out := make([]memory.Turn, len(in))
	for i, t := range in {
		t.Content = redactText(t.Content, n)
		out[i] = t
	}
	return out
}

// recall returns the long-term memories for this scope, best first, as
// prompt lines within the memory budget.
func (r *run) recall(ctx context.Context, goal string) []string {
	lt := r.a.cfg.Memory
	if lt == nil {
		return nil
	}
	q := goal
	if len(r.newFiles) > 0 {
		q += " " + strings.Join(r.newFiles, " ")
	}
	hits, err := lt.Search(ctx, memory.Query{Scope: scopeOf(r.turn.Message), Text: q, Limit: recallLimit, MinPriority: recallMinPrio})
	if err != nil {
		metrics.MemoryErrors.WithLabelValues("search").Inc()
		r.log.Warn("recall memories; continuing without", "error", err)
		return nil
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Priority > hits[j].Priority
	})
	var out []string
	used := 0
	for _, h := range hits {
		line := fmt.Sprintf("[%s, %s, %s] %s", h.Type, h.Scope, h.CreatedAt.Format("2006-01-02"), redactText(h.Content, &r.redactions))
		if used+len(line) > maxMemoryChars {
			break
		}
		used += len(line)
		out = append(out, line)
	}
	return out
}

// recurring says whether the error templates were seen before in this
// channel (or, in a DM, by this person): "seen 3 times since Nov 12 in this
// channel; last time the cause was …".
func (r *run) recurring(ctx context.Context, fps []string) string {
	lt := r.a.cfg.Memory
	if lt == nil {
		return ""
	}
	m := r.turn.Message
	scope := memory.Scope{Tenant: m.Tenant, Channel: m.Channel}
	where := "in this channel"
	if m.DM {
		scope = memory.Scope{Tenant: m.Tenant, User: m.User}
		where = "in your conversations"
	}
	if len(fps) > 5 {
		fps = fps[:5]
	}
	seen := map[string]memory.Record{}
	for _, fp := range fps {
		recs, err := lt.List(ctx, memory.Filter{Scope: scope, Types: []string{memory.TypeIncident}, Fingerprint: fp}, 50)
		if err != nil {
			metrics.MemoryErrors.WithLabelValues("list").Inc()
			r.log.Warn("look up recurring incidents", "error", err)
			return ""
		}
		for _, rec := range recs {
			if rec.Source.Session == r.key && rec.CreatedAt.After(r.start.Add(-time.Second)) {
				continue
			}
			seen[rec.ID] = rec
		}
	}
	if len(seen) == 0 {
		return ""
	}
	var recs []memory.Record
	for _, rec := range seen {
		recs = append(recs, rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	first, last := recs[0], recs[len(recs)-1]
	times := "once"
	if len(recs) > 1 {
		times = fmt.Sprintf("%d times", len(recs))
	}
	s := fmt.Sprintf(recurringPrefix+"%s since %s %s; last time the cause was: %s",
		times, first.CreatedAt.Format("Jan 2"), where, truncate(redactText(last.Content, &r.redactions), 240))
	var links []string
	for _, rec := range recs {
		if rec.Source.Link != "" {
			links = append(links, rec.Source.Link)
		}
	}
	if len(links) > 0 {
		links = uniq(links)
		if len(links) > 3 {
			links = links[len(links)-3:]
		}
		s += " (threads: " + strings.Join(links, ", ") + ")"
	}
	return s
}

// rememberFromSkill writes the memories a skill asked for and returns the
// acknowledgement the model reads.
func (r *run) rememberFromSkill(ctx context.Context, skill string, mems []skills.Memory) string {
	if len(mems) == 0 {
		return ""
	}
	if r.a.cfg.Memory == nil {
		return "[sleuth: long-term memory is not configured; nothing was remembered]"
	}
	var acks []string
	for _, mm := range mems {
		rec, ok := r.record(mm, skill)
		if !ok {
			continue
		}
		if err := r.a.cfg.Memory.Add(ctx, rec); err != nil {
			metrics.MemoryErrors.WithLabelValues("add").Inc()
			r.log.Warn("write memory", "error", err)
			return "[sleuth: the memory could not be saved (the store is unavailable); tell the person it was not remembered]"
		}
		ack := fmt.Sprintf("%s (%s, %s scope): %q", rec.Type, priorityWord(rec.Priority), rec.Scope, rec.Content)
		r.written = append(r.written, ack)
		acks = append(acks, ack)
	}
	if len(acks) == 0 {
		return ""
	}
	return "[sleuth: remembered " + strings.Join(acks, "; ") + "]"
}

// record turns a skill memory into a scoped, redacted record.
func (r *run) record(mm skills.Memory, skill string) (memory.Record, bool) {
	m := r.turn.Message
	content := strings.TrimSpace(redactText(mm.Content, &r.redactions))
	if content == "" {
		return memory.Record{}, false
	}
	scope := mm.Scope
	if scope != memory.ScopeChannel || m.DM || m.Channel == "" {
		scope = memory.ScopeUser
	}
	typ := mm.Type
	switch typ {
	case memory.TypePreference, memory.TypeFact, memory.TypeIncident, memory.TypeTaskResult:
	default:
		typ = memory.TypeFact
	}
	rec := memory.Record{
		Tenant: m.Tenant, User: m.User, Scope: scope, Type: typ,
		Priority: max(0, min(5, mm.Priority)), Content: truncate(content, 400),
		Fingerprints: mm.Fingerprints,
		Source:       memory.Source{Session: r.key, Skill: skill, File: mm.File, Line: mm.Line, Link: m.Link},
		CreatedAt:    r.a.cfg.Clock(),
	}
	if scope == memory.ScopeChannel {
		rec.Channel = m.Channel
	}
	return rec, true
}

func priorityWord(p int) string { return "priority " + strconv.Itoa(p) }

// writeMemories distils the finished turn: with a model, at most three
// memories it extracts; without one, the incident as its error-template
// fingerprints plus the conclusion.
func (r *run) writeMemories(ctx context.Context, answer string) {
	if r.a.cfg.Memory == nil {
		return
	}
	var mems []skills.Memory
	if d, ok := r.brain.(Distiller); ok && r.fallback == "" {
		out, tokens, err := d.Distill(ctx, r.st.Goal, answer)
		r.tokens += tokens
		if err != nil {
			r.log.Warn("distil memories", "error", err)
		}
		if len(out) > 3 {
			out = out[:3]
		}
		mems = out
	}
	fps := uniq(r.fingerprints)
	if len(fps) > 0 {
		scope := memory.ScopeChannel
		if r.turn.Message.DM {
			scope = memory.ScopeUser
		}
		hasIncident := false
		for i := range mems {
			if mems[i].Type == memory.TypeIncident {
				mems[i].Fingerprints = fps
				hasIncident = true
			}
		}
		if !hasIncident {
			if concl := conclusion(answer); concl != "" {
				mems = append(mems, skills.Memory{Scope: scope, Type: memory.TypeIncident, Priority: 3, Content: concl, Fingerprints: fps})
			}
		}
	}
	if len(mems) == 0 {
		return
	}
	var recs []memory.Record
	for _, mm := range mems {
		if rec, ok := r.record(mm, ""); ok {
			recs = append(recs, rec)
		}
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.a.cfg.Memory.Add(wctx, recs...); err != nil {
		metrics.MemoryErrors.WithLabelValues("add").Inc()
		r.log.Warn("write memories", "error", err)
		return
	}
	for _, rec := range recs {
		r.written = append(r.written, fmt.Sprintf("%s (%s scope): %q", rec.Type, rec.Scope, rec.Content))
	}
}

// conclusion is the answer's "Conclusion:" paragraph when it has one,
// else its first sentence-like line, without markup and without line
// numbers (a memory outlives the thread's attachments).
func conclusion(answer string) string {
	lines := strings.Split(answer, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(strings.ReplaceAll(line, "**", ""))
		rest, ok := strings.CutPrefix(t, "Conclusion:")
		if !ok {
			continue
		}
		parts := []string{strings.TrimSpace(rest)}
		for _, next := range lines[i+1:] {
			n := strings.TrimSpace(next)
			if n == "" || strings.HasPrefix(n, "**") {
				break
			}
			parts = append(parts, n)
		}
		if c := stripCitations(strings.Join(parts, " ")); c != "" {
			return truncate(c, 300)
		}
	}
	for _, line := range lines {
		t := strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "#*_>"))
		if t == "" || strings.HasPrefix(t, "I could not") {
			continue
		}
		return truncate(stripCitations(t), 300)
	}
	return ""
}
