package logscan

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Changes. "What changed just before it broke?" is the first question an
// on-call engineer asks of a service log, and the answer is often a line
// with no failure word at all: a runtime setting updated ("new=2s
// old=20s"), a feature flag toggled, a statement an administrator ran
// (`ALTER SYSTEM SET …`), a command issued on a console. Such templates
// often recur harmlessly (the same flag toggled back and forth, a pause
// later resumed), so neither rarity nor novelty finds the one that
// mattered; its position does: the last change before the errors began.
//
// An event below warning level is a change when its message reads as one
// (reChange, reAdminStmt); such events are noted as the file is read
// (noteChange, which tests the first events of templates whose first
// message was a change), and rank shows the last one before the errors,
// after the start-up phase, as a candidate of its own (changeCands). A
// template printed more than maxChangeCount times is a routine, not a
// change.
const (
	maxChangeEvents = 1024  // change events noted per file
	maxChangeCount  = 20    // events of a template that is still a change
	maxChangeTests  = 16384 // messages tested in all (two regular expressions each)
)

// change is one event of a change template.
type change struct {
	line    int
	ms      int64 // its time, 0 none
	cluster int32
	text    string
	drift   string // for a setting that differs from its first event (see noteDrift), what changed
}

// reChange matches what a change of a running system's settings or an
// operator's action reads like: a setting with a verb of change (either
// order), an old and a new value, a value set (or being set, changed,
// updated) from one thing to another, a command issued. (A state that
// "changed from A to B" is not a change someone made.)
var reChange = regexp.MustCompile(`(?i)` +
	`\b(?:config(?:uration)?|settings?|options?|param(?:eter)?s?|propert(?:y|ies)|flags?|toggles?|limits?|quotas?|polic(?:y|ies)|rules?|thresholds?|timeouts?)\b(?:[^.;!?]|\.\S){0,60}?\b(?:changed|updated|modified|reloaded|applied|altered|overridden|switched|toggled|set to|enabled|disabled|increased|decreased|reduced|lowered|raised)\b` +
	`|\b(?:changed|updated|modified|reloaded|reloading|applied|applying|toggled|overrode|overriding|altered)\b(?:[^.;!?]|\.\S){0,40}?\b(?:config(?:uration)?|settings?|options?|param(?:eter)?s?|flags?|limits?|quotas?|polic(?:y|ies)|rules?|thresholds?|timeouts?)\b` +
	`|\breconfigur|\bhot[- ]?reload|^\W*reload(?:ed|ing)\b` +
	`|\bold\s*[=:][^=]{0,80}?\bnew\s*[=:]|\bnew\s*[=:][^=]{0,80}?\bold\s*[=:]` +
	`|\b(?:set|setting|increas(?:ed|ing)|decreas(?:ed|ing)|reduc(?:ed|ing)|rais(?:ed|ing)|lower(?:ed|ing)|resiz(?:ed|ing)|scal(?:ed|ing)|shrunk|grown|changing|updating|switching)\b(?:[^.;!?]|\.\S){0,100}?\bfrom\s+\S+\s+(?:\S+\s+)?to\b` +
	`|\bissued\b(?:[^.;!?]|\.\S){0,40}?\bcommand\b|\bcommand\b(?:[^.;!?]|\.\S){0,20}?\b(?:issued|received)\b`)

// reValueChange matches a change that states the value it changed from or
// to: "old=20s new=2s", "oldValue: … newValue: …", "from 2000 to 20",
// `"1200000" -> "105000"`.
var reValueChange = regexp.MustCompile(`(?i)\bold\w*\s*[=:]|\bnew\w*\s*[=:]|\bfrom\s+\S+\s+(?:\S+\s+)?to\b|\S\s+->\s+\S|\S\s+=>\s+\S`)

// reAdminStmt matches an administrative statement as databases log it:
// DDL, privileges, server settings (`ALTER SYSTEM`, `SET GLOBAL`).
var reAdminStmt = regexp.MustCompile(`\b(?:ALTER (?:SYSTEM|TABLE|DATABASE|SCHEMA|USER|ROLE|INDEX|TABLESPACE)|DROP (?:TABLE|DATABASE|SCHEMA|INDEX|USER|ROLE)|TRUNCATE|GRANT|REVOKE|SYSTEM (?:STOP|START)|CONFIG SET|FLUSHALL|FLUSHDB|(?i:set (?:global|persist)))\b`)

// changeLine reports whether a message reads as a change.
func changeLine(msg string) bool {
	return reChange.MatchString(msg) || reAdminStmt.MatchString(msg) ||
		strings.Contains(msg, " -> ") && reSetArrow.MatchString(msg)
}

// reSetArrow matches a value an operator set, with an arrow from the old
// value to the new: `User 'k.weber' set: [… prefix-limit maximum]
// "1200000" -> "105000"`. Apart from reChange, whose size its counted
// repetition would double.
var reSetArrow = regexp.MustCompile(`(?i)\bset:?\s(?:[^.;!?]|\.\S){0,160}?\S\s+->\s+\S`)

// noteChange notes the event fs.ev of cluster c, below warning level,
// when its message reads as a change. A template whose first such message
// does not is never tested again, and one whose does has each of its
// first maxChangeCount events tested (one template may hold an
// administrator's statements and routine queries alike). Out of line:
// after its first test it runs for change templates only; at most
// maxChangeTests messages are tested in all.
//
//go:noinline
func (e *engine) noteChange(fs *fileState, c *clusterStat) {
	ev := &fs.ev
	first := c.change == 0
	c.change = 1
	if e.changeTests >= maxChangeTests || len(fs.changes) >= maxChangeEvents || c.count > maxChangeCount {
		return
	}
	e.changeTests++
	if !changeLine(ev.msg) {
		if !first {
			c.change = 2 // this event is no change; later ones may be
		}
		return
	}
	c.change = 2
	fs.changes = append(fs.changes, change{line: ev.line, ms: ev.ms, cluster: ev.cluster, text: clip(ev.text)})
}

// changeCands returns, per service log, the last change before its
// errors start (at its incident's bursts, else at the first error that is
// not background, else at the first such warning) as a candidate of its own, shown where it happened and
// counted with all its template's events; and, when the operation that
// logged it logged changes just before it (see sameOperation), the first
// of those too. Changes in the start-up phase (the first fifth of the
// lines before the start) are configuration, not changes; build logs (see
// novelty) are left out, as score's precursor weight leaves them out.
func (e *engine) changeCands(rc rankCtx, groups map[string][]int32, merged map[mkey]*cand) []*cand {
	e.splitDrifts(rc, groups)
	var out []*cand
	for f, fs := range rc.files {
		if len(fs.changes) == 0 || rc.serviceWeight(int32(f)) == 0 {
			continue
		}
		start, ok := rc.incident[int32(f)]
		if !ok {
			start, ok = rc.onset[int32(f)]
		}
		if !ok {
			// a log that only warns, too little for an incident: its
			// first warning that is not background
			start = rc.warnOnset[int32(f)]
		}
		var best *change
		for i := range fs.changes {
			ch := &fs.changes[i]
			if ch.line >= start {
				break // noted in order
			}
			if ch.line >= max(10, start/5) && e.isChange(rc, groups, merged, ch) {
				best = ch
			}
		}
		late := false
		if best == nil {
			// None before the first error: a setting that differs at a
			// restart later on, before the last error (the first ones, a
			// retried soft error, may have come and gone).
			for i := range fs.changes {
				ch := &fs.changes[i]
				if ch.line >= fs.lastErrLine {
					break
				}
				if ch.line > start && ch.drift != "" && e.isChange(rc, groups, merged, ch) {
					best, late = ch, true
				}
			}
		}
		if best == nil {
			continue
		}
		// Of one operation's changes, the last that says what changed
		// to what: "dynamic config changed for the key: … oldValue: 9000
		// newValue: 900" rather than the "Updated dynamic config" after it.
		if !reValueChange.MatchString(best.text) {
			for i := len(fs.changes) - 1; i >= 0; i-- {
				ch := &fs.changes[i]
				if ch.line >= best.line {
					continue
				}
				if ch.line < max(10, start/5) || !sameOperation(ch, best) {
					break
				}
				if reValueChange.MatchString(ch.text) && e.isChange(rc, groups, merged, ch) {
					best = ch
					break
				}
			}
		}
		// One operation may log several changes ("config file changed,
		// reloading", "config updated key=… new=2s old=20s"): its first
		// says where it began, its last may say what it changed.
		shown := best
		for i := len(fs.changes) - 1; i >= 0; i-- {
			ch := &fs.changes[i]
			if ch.line >= shown.line || ch.line < max(10, start/5) {
				continue
			}
			if !sameOperation(ch, shown) {
				break
			}
			if e.isChange(rc, groups, merged, ch) {
				shown = ch
			}
		}
		for _, ch := range []*change{shown, best} {
			id := rc.ids[ch.cluster]
			orig := merged[mkey{id, 0}]
			out = append(out, &cand{cluster: ch.cluster, file: int32(f), line: ch.line, head: ch.line, text: ch.text, headText: ch.text,
				count: templateCount(e, groups[id]), lastFile: orig.lastFile, lastLine: orig.lastLine, level: orig.level, change: start, drift: ch.drift})
			if late {
				out[len(out)-1].change = fs.lastErrLine
				out[len(out)-1].late = true
			}
			if shown == best {
				break
			}
		}
	}
	return out
}

// isChange reports whether the noted change ch still counts as one once
// the file is read: its template is below warning level and printed at
// most maxChangeCount times.
func (e *engine) isChange(rc rankCtx, groups map[string][]int32, merged map[mkey]*cand, ch *change) bool {
	id := rc.ids[ch.cluster]
	orig := merged[mkey{id, 0}]
	limit := int64(maxChangeCount)
	if ch.drift != "" {
		limit = maxDriftCount
	}
	return orig != nil && orig.level < lvWarn && templateCount(e, groups[id]) <= limit
}

func templateCount(e *engine, g []int32) int64 {
	var n int64
	for _, z := range g {
		n += e.cl[z].count
	}
	return n
}

// sameOperation reports whether change a, before b, was logged by the same
// operation: within changeOpLines lines and changeOpMS of it.
func sameOperation(a, b *change) bool {
	if b.line-a.line > changeOpLines {
		return false
	}
	return a.ms == 0 || b.ms == 0 || b.ms-a.ms <= changeOpMS
}

const (
	changeOpLines = 20
	changeOpMS    = 5000
)

// changeReason is score's reason for a change candidate.
func changeReason(c *cand) string {
	if c.late {
		return fmt.Sprintf("a setting changed at a restart before the last error at L%d: %s", c.change, c.drift)
	}
	if c.drift != "" {
		return fmt.Sprintf("the last change before the errors starting at L%d: %s", c.change, c.drift)
	}
	return fmt.Sprintf("the last change before the errors starting at L%d", c.change)
}

// Settings that differ from the last start. A line a service prints when
// it starts or reloads ("added IPv4 subnets: 6", `"limit_mib": 6553`) and
// prints again after a silence, at its next start, with another value for
// one of its settings, is a change nobody logged as one: what an engineer
// finds by comparing the start-up lines of the two runs. noteDrift
// compares the key-value pairs of such a return with its template's first
// event; times, ids and measurements (see volatileSetting) are no
// settings.
//
// Only a line that says it reports the configuration ("completed
// configuration", "Memory limiter configured", "options:") is compared:
// the key-value pairs of a statistics or access line are measurements.
//
// A line printed once per start is printed a few times in one log: a
// template printed more than maxDriftCount times (a session's "Logged out
// in=4560", a connection's id) reports what happens, not how the service
// is set up.
const maxDriftCount = 3

var reSetting = regexp.MustCompile(`([A-Za-z_][\w.-]*)"?[ \t]?[=:][ \t]?("[^"]{0,80}"|[^\s,;"}\])]{1,80})`)

// noteDrift notes the return fs.ev of cluster c, below warning level, as a
// change when one of its settings differs from c's first event. Out of
// line: it runs on returns after a silence only.
//
//go:noinline
func (e *engine) noteDrift(fs *fileState, c *clusterStat, fileIdx int32) {
	ev := &fs.ev
	if len(fs.changes) >= maxChangeEvents || c.file != fileIdx || !mayReportSettings(ev.text) {
		return
	}
	if d := settingDrift(c.firstText(), ev.text); d != "" {
		fs.changes = append(fs.changes, change{line: ev.line, ms: ev.ms, cluster: ev.cluster, text: clip(ev.text),
			drift: fmt.Sprintf("%s (L%d)", d, c.first)})
	}
}

// mayReportSettings reports whether a line may list settings: it has a
// key-value separator and says it reports configuration.
func mayReportSettings(s string) bool {
	return strings.IndexAny(s, "=:") >= 0 && reConfigWord.MatchString(s)
}

// A configuration dump can be long (ExternalDNS prints some 170 settings
// on one line at its start): this many bytes and settings of it are
// compared.
const (
	maxSettingsText  = 16 << 10
	maxSettings      = 512
	maxSettingsBytes = 4 << 20 // all clusters' first texts kept for this
)

// firstText is the text of c's first event, past the clip where it may
// report settings.
func (c *clusterStat) firstText() string {
	if c.settings != "" {
		return c.settings
	}
	return c.text
}

// splitDrifts notes, as noteDrift does, the settings that changed between
// two clusters the miner kept apart while reading and merged into one
// template at the end: a long configuration dump with other values at
// the next start is a new shape until the miner sees the two are one.
// Each such cluster's first event is compared with the events before it
// of the same template and file, when it came after a silence.
func (e *engine) splitDrifts(rc rankCtx, groups map[string][]int32) {
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		var n int64
		for _, z := range g {
			n += e.cl[z].count
		}
		if n > maxDriftCount {
			continue
		}
		for _, z := range g {
			b := &e.cl[z]
			if b.level >= lvWarn || int(b.file) >= len(rc.files) || !mayReportSettings(b.firstText()) {
				continue
			}
			for _, y := range g {
				a := &e.cl[y]
				if y == z || a.file != b.file || a.first >= b.first || b.first-a.last < returnGapLines {
					continue
				}
				if d := settingDrift(a.firstText(), b.firstText()); d != "" {
					rc.files[b.file].addChange(change{line: b.first, ms: b.firstMS, cluster: z, text: b.text,
						drift: fmt.Sprintf("%s (L%d)", d, a.first)})
					break
				}
			}
		}
	}
}

// addChange inserts ch among the file's changes, which stay in line order.
func (fs *fileState) addChange(ch change) {
	if len(fs.changes) >= maxChangeEvents {
		return
	}
	i := sort.Search(len(fs.changes), func(i int) bool { return fs.changes[i].line >= ch.line })
	if i < len(fs.changes) && fs.changes[i].line == ch.line {
		return
	}
	fs.changes = slices.Insert(fs.changes, i, ch)
}

// settingDrift returns "key: old → new" for the first setting whose value
// differs between the lines then and now, "" when none does.
func settingDrift(then, now string) string {
	old := map[string]string{}
	for _, m := range reSetting.FindAllStringSubmatch(then, maxSettings) {
		if !volatileSetting(m[1], m[2]) {
			if _, dup := old[m[1]]; !dup {
				old[m[1]] = m[2]
			}
		}
	}
	seen := map[string]bool{}
	for _, m := range reSetting.FindAllStringSubmatch(now, maxSettings) {
		k, v := m[1], m[2]
		if seen[k] || volatileSetting(k, v) {
			continue
		}
		seen[k] = true
		if o, ok := old[k]; ok && o != v {
			return fmt.Sprintf("%s: %s → %s", k, o, v)
		}
	}
	return ""
}

var (
	// reConfigWord: the line says it reports configuration
	reConfigWord = regexp.MustCompile(`(?i)\bconfig|\bsettings?\b|\boptions?\b|\bparameters?\b`)
	// a duration ("35ms") or a date in a value: no setting
	reDuration = regexp.MustCompile(`^\d+(\.\d+)?(ns|us|µs|ms|s|m|h)$`)
	reDate     = regexp.MustCompile(`\d{4}-\d\d-\d\d`)
)

// volatileSetting reports whether key k with value v is no setting but
// what differs between any two prints of a line: a time, a process or
// request id, a duration or a measurement.
func volatileSetting(k, v string) bool {
	switch strings.ToLower(strings.TrimLeft(k, "_")) {
	case "t", "ts", "time", "timestamp", "date", "datetime", "at", "pid", "ppid", "tid", "thread", "goroutine", "id", "uuid",
		"req", "req_id", "request_id", "requestid", "trace_id", "traceid", "span_id", "spanid", "session", "session_id", "sid",
		"took", "duration", "elapsed", "uptime", "latency", "seq", "caller", "line", "memory", "mem", "rss", "heap", "cpu", "load", "usage":
		return true
	}
	v = strings.Trim(v, `"`)
	if reDuration.MatchString(v) || reDate.MatchString(v) {
		return true
	}
	digits, hex := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
			digits++
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			hex++
		case c == ':' && i > 0 && isDigit(v[i-1]):
			return true // a time of day
		}
	}
	// an id: a long run of hex digits, or a value mostly digits and long
	return digits > 0 && len(v) >= 8 && (digits+hex == len(v) || strings.Count(v, "-") >= 3)
}

// changeWeight is score's weight for the last change before the errors,
// faded out in build logs as the precursor weight is.
const changeWeight = 3.5
