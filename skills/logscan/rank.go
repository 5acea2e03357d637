package logscan

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Ranking vocabulary. Weights are set on logs of several stacks (see
// testdata); none is tuned to one file.
var (
	// Crashes: the process or device died.
	reCrash = regexp.MustCompile(`(?i)guru meditation|\bpanic(ked|'ed)?\b|\bruntime error\b|terminate called after throwing|OutOfMemoryError|out of memory|\boom[- ]?kill|killed process|segmentation fault|\bsig(segv|abrt|kill|bus)\b|core dumped|fatal error|stack overflow|double free|kernel panic|watchdog (?:got )?(?:triggered|timeout|reset|bite|expired)|watchdog timer expired|watchdog: bug|netdev watchdog|(?:soft|hard) lockup|brownout|unhandled exception|\bkilled(?:$|[^\w "]| [^"])|\bdied\b|\bsignal[ =](?:6|9|11)\b|data race|` +
		// a CI runner stopping a job that hung or ran too long
		`no output has been received|maximum (execution )?time|time limit (for jobs|exceeded)|stalled build`)
	// A CI runner's notice that it stopped a job that hung or ran too
	// long: what the job printed last is what it was doing.
	reRunnerStop = regexp.MustCompile(`(?i)no output has been received|exceeded the maximum (execution )?time|time limit for jobs|has exceeded the maximum`)
	// Exit markers: a step ended badly.
	reExit = regexp.MustCompile(`(?i)BUILD FAILURE|BUILD FAILED|exit(ed)? (with )?(code|status):? ?[1-9]|exit code:? ?[1-9]|non-zero exit|returned [1-9]\b|rebooting|(?-i:FAILURE:|\bFAILED\b)`)
	// A compiler or linter diagnostic points at a source file, line and
	// column: "src/x.c:12:5: error", "Foo.cs(14,7): error", "a.ts(3,1)",
	// "posting.cc:88:22:", ktlint's "Foo.kt:48:1 Unexpected indentation"
	// (not Playwright's test title "search.spec.ts:18:7 › search"),
	// dialyxir's "calculator.ex:64:15:call" (the warning's kind last).
	// Stack frames ("at f (a.js:60:7)", "main.go:42 +0x1d") are not.
	reLocated = regexp.MustCompile(`\.[A-Za-z][A-Za-z0-9+]{0,5}((:\d+){1,2}:(\s|$)|:\d+:\d+ [A-Za-z]|:\d+:\d+:[a-z_]+$|\(\d+,\d+\):)`)
	// A line announcing that the tool will try again reports a failure it
	// is handling: "Retrying (Retry(total=4, ...)) after connection broken",
	// "Retrying fetcher due to error (2/4)", "timeout, retrying in 5s".
	reRetry = regexp.MustCompile(`(?i)\bretrying\b|\bwill retry\b|\bretry(ing)? (in|after) \d|\b(tries|attempts|retries) (remaining|left)\b`)
	// Code a build fetched rather than wrote: a diagnostic located there
	// ("site-packages/aiohttp/client.py:512: RuntimeWarning") points at a
	// dependency, not at the change under test.
	reDependencyPath = regexp.MustCompile(`(site|dist)-packages/|node_modules/|/vendor/|\.cargo/registry/|/go/pkg/mod/|\.m2/repository/|/usr/(lib|include)/|\.gradle/caches/|/gems/|/Pods/|Carthage/Checkouts/`)
	// Generic wrappers that report a failure explained elsewhere.
	reWrapper = regexp.MustCompile(`(?i)command failed|process completed with exit code|returned \d+ exit status|exited with (code|status)|returned non-zero exit|make(\[\d+\])?: \*\*\* |npm ERR! (code|errno|a complete log|this is probably)|ERROR: Job failed|script returned exit code|failed with exit code|Execution failed for task|for more details|re-?run with|see the complete (report|log)|Run with --(stacktrace|info|debug)|subprocess-exited-with-error|ERROR: failed to solve|see (the )?(above|log|full)|\b(for|of|on) (the |this )?failed (step|job|build|stage)\b|with root cause$|threw exception$|for servlet \[|error: recipe for target|build step .* failed|The command ".*" (exited|failed)|Your build exited with|waiting for other jobs to finish|\b(finished|completed) with (\d+ )?(errors|failures)\b|^(\[\w+\]\s*)?Total time:|^\s*\d+ (errors?|failures?)\b|` +
		// a named unit's verdict: Gradle's "> Task :app:lint FAILED",
		// TeamCity's "Step Migrate (Command Line) failed"
		`\bTask :\S+ FAILED\s*$|\b(Step|Stage|Job) [^:]{1,80} failed\.?\s*$|` +
		// act's (Gitea's, Forgejo's runner), CodeBuild's and Bamboo's
		// reports of a failed command or task;
		// a line that ends in a bare exit status (Go's exec error text)
		`❌\s+Failure - |Command did not exit successfully|Error while executing command:|Phase complete: \w+ State: FAILED|Finished task '.*' with result: Failed|Failing task since return code|exitcode '\d+': failure|(?:^|[\s:])exit (?:status|code):? ?\d+\s*$|` +
		// Maven's help after every failed build
		`re-?run Maven|\[Help \d+\]|information about the errors and possible solutions|to see the full stack trace of the errors|after correcting the problems, you can resume|mvn <(goals|args)> -rf`)
	// Summaries that count or point back at failures reported elsewhere:
	// tallies ("1 failed, 211 passed", "Errors: 1", "1 Error(s)",
	// "(1 error, 18 warnings)") and references ("due to 1 previous error",
	// "about this error", "skipped due to earlier failure(s)").
	// A count is a tally only where a list or the line goes on after it,
	// so "after 5 failed attempts" and "upstream error 503" are not, and
	// only a number standing alone ("0.0.0.0:443 failed (98: …)" is a port);
	// "Errors: 1" ends the line or the list goes on ("error: 400 ::" is a
	// status code).
	reSummary = regexp.MustCompile(`(?i)(^|[\s(\[,])\d+ (\w+ )?(errors?|failures?|failed|problems?)(\s*[,;.()|]|\s*$|\s+(in|and|out of)\b)|\b\d+ error\(s\)|\berror\(s\)|\b(errors?|failures?|failed): \d+(\s*[,;)]|\s*$)|\b(previous|earlier|above|preceding) (\d+ )?(errors?|failures?)|\b(this|the above) (error|failure)\b|failures? listed here`)
	// reDiffReport finds a diff's added line that is a report with its
	// own level, "+ERROR:  extension \"x\" has no installation script":
	// code does not start that way, a program's output does.
	reDiffReport = regexp.MustCompile(`(?:^|\s)\+(?:ERROR|FATAL|PANIC|WARNING):\s`)
	reKnown      = []known{
		{regexp.MustCompile(`(?i)no space left on device|disk quota|disk full`), "disk full"},
		{regexp.MustCompile(`(?i)too many open files`), "file descriptors exhausted"},
		{regexp.MustCompile(`(?i)connection refused|ECONNREFUSED`), "connection refused"},
		{regexp.MustCompile(`(?i)connection (is )?not available|pool (is )?exhausted|exhausted|no (free|available) (connections?|slots?|buffers?)`), "resource pool exhausted"},
		{regexp.MustCompile(`(?i)limit reached|reached (the |its )?(max(imum)?|limit)|\b(is|are) full\b|(table|queue|buffer) full`), "limit reached"},
		{regexp.MustCompile(`(?i)quota (exceeded|reached)|(exceeds?|exceeded|over) (its |the |your )?(\w+ )?quota\b|insufficient quota`), "quota exceeded"},
		{regexp.MustCompile(`(?i)deadlock`), "deadlock"},
		{regexp.MustCompile(`(?i)permission denied|access denied|EACCES|unauthori[sz]ed|forbidden`), "permission denied"},
		{regexp.MustCompile(`(?i)x509|certificate|tls handshake|ssl`), "TLS/certificate"},
		{regexp.MustCompile(`(?i)address already in use|EADDRINUSE|port \d+ (is|was) already in use|port is already (in use|allocated)`), "port in use"},
		{regexp.MustCompile(`(?i)timed out|(?:^|[^-])timeout|deadline exceeded`), "timeout"},
		{regexp.MustCompile(`(?i)ModuleNotFoundError|ImportError|cannot find module|undefined symbols?\b|could not find|can't find|unable to (find|locate)|no matching (distribution|version|package)|ClassNotFoundException|NoClassDefFoundError|cannot find symbol|undefined reference|unresolved (import|reference)|could not resolve|no such file or directory|not found`), "missing dependency or file"},
		{regexp.MustCompile(`(?i)OutOfMemoryError|out of memory|killed process|\boom\b`), "out of memory"},
		{regexp.MustCompile(`(?i)overrun|overflow`), "overrun"},
		{regexp.MustCompile(`(?i)AssertionError|assertion\w*fail|assertion failed|assert(ion)? .* (failed|==)|\bassert\w*\W.*\bfail|expected .* (but )?(got|was)`), "assertion"},
		{regexp.MustCompile(`(?i)NullPointerException|nil pointer|NoneType|null reference|undefined is not`), "null dereference"},
		{regexp.MustCompile(`(?i)could not resolve host|name or service not known|no such host|temporary failure in name resolution`), "DNS"},
		{regexp.MustCompile(`(?i)too many requests|rate limit`), "rate limited"},
		{regexp.MustCompile(`(?i)syntax error|SyntaxError|parse error|unexpected token`), "syntax error"},
		// a part of the machine failing or about to: heat, memory errors,
		// fans, power, a worn battery, a disk's own health report
		{regexp.MustCompile(`(?i)\b(temperature|thermal|over-?temp\w*|overheat\w*)\b.{0,40}\b(exceed\w*|threshold|critical|too high|throttl\w*)|machine check|hardware error|\b(un)?correctable (memory |ECC )?errors?\b|multi-bit|\bfan\b.{0,20}\b(fail\w*|stopped|below)|power supply.{0,30}\b(lost|fail\w*|removed)|battery (needs|need|is low|low|fail\w*)|needs to be replaced|SMART (failure|error|threshold)|reallocated sectors?|pending sectors?`), "hardware fault"},
	}
)

type known struct {
	re    *regexp.Regexp
	label string
}

// rankCtx is what the ranking needs beyond the candidates.
type rankCtx struct {
	files     []*fileState
	bursts    map[int32][]Burst
	baseline  bool
	baseLines int64
	lines     int64
	diverge   int32 // cluster where the run diverged, -1 none
	ids       []string
	texts     []string       // final template texts, by cluster
	first     map[string]int // first line of each final template, by id and file
	novel     []float64      // per file: templates per event (see novelty)
	// lastBeforeStop maps a line that was the last output before a CI
	// runner stopped the job to the line of the runner's notice
	lastBeforeStop map[[2]int]int
	// onset is, per file, the first line of the first error that is not
	// background (see background); warnOnset likewise of warnings
	onset, warnOnset map[int32]int
	// incident is, per file, the first line of its incident's bursts of
	// errors (see incidentStart)
	incident map[int32]int
	// onsetMS and incidentMS are the times of onset and incident, where
	// the log has them
	onsetMS, incidentMS map[int32]int64
	// warnIncident: the file's incident is where its warnings rose (it
	// has too few errors to tell)
	warnIncident map[int32]bool
}

// incidentGapMS is the longest lull between two bursts of errors of one
// incident: a retry loop or a crash loop errs in waves.
const incidentGapMS = 5 * 60 * 1000

// incidentStart returns where a file's incident starts: the first burst
// of the run of bursts, each within incidentGapMS of the one before,
// that holds the most errors.
func incidentStart(bs []Burst) (int, bool) {
	best, bestN := -1, 0
	for i := 0; i < len(bs); {
		j, n := i, bs[i].Errors
		for j+1 < len(bs) && bs[j].endMS != 0 && bs[j+1].startMS-bs[j].endMS <= incidentGapMS {
			j++
			n += bs[j].Errors
		}
		if n > bestN {
			best, bestN = i, n
		}
		i = j + 1
	}
	if best < 0 {
		return 0, false
	}
	return bs[best].StartLine, true
}

// incidentWindow is how many lines before a file's incident (see
// incidentStart) an error first seen there counts as one of its causes:
// the cascade is loud, what started it came shortly before.
const incidentWindow = 150

// Background errors: a template of warnings or errors that a service log
// prints from its first quarter to its last, at least bgMinCount times
// (failed ssh logins, scanners' TLS handshakes, a chatty driver), was
// there before whatever went wrong and goes on after it. An engineer reads
// past it; the incident's first error is the first of the others.
const (
	bgMinCount = 3
	bgMinLines = 200 // shorter files have no "all day"
	bgEdge     = 0.25
)

// background reports whether c is one of its file's background errors.
func background(c *cand, files []*fileState) bool {
	if c.level < lvWarn || c.count < bgMinCount || c.lastFile != c.file {
		return false
	}
	n := float64(files[c.file].lines)
	return n >= bgMinLines && float64(c.head) <= bgEdge*n && float64(c.lastLine) >= (1-bgEdge)*n
}

// novelty returns, per file, the number of templates first seen in it
// over the number of events it holds: near 0 for a service log that
// repeats a few templates, near 1 for a build log whose every line says
// something new.
func novelty(cl []clusterStat, files int) []float64 {
	tpl := make([]float64, files)
	ev := make([]float64, files)
	for i := range cl {
		cs := &cl[i]
		if cs.count == 0 || int(cs.file) >= files {
			continue
		}
		tpl[cs.file]++
		ev[cs.file] += float64(cs.count)
	}
	for i := range tpl {
		if ev[i] > 0 {
			tpl[i] /= ev[i]
		}
	}
	return tpl
}

// Novelty (see novelty) below novelService is a service log's, at or
// above novelBuild a build log's.
const (
	novelService = 0.2
	novelBuild   = 0.5
)

// serviceWeight is 1 for a service log, fading to 0 for a build log, by
// the novelty of file f: the weight of what a service log's timeline says
// (the first error, what preceded the errors).
func (rc rankCtx) serviceWeight(f int32) float64 {
	if int(f) >= len(rc.novel) {
		return 1
	}
	return min(1, max(0, (novelBuild-rc.novel[f])/(novelBuild-novelService)))
}

// tier is the level of the events file f's incident is made of: lvError,
// or lvWarn in a service log whose incident only warns (see
// warnIncident): there a warning first seen shortly before the incident
// is as telling as a new error is elsewhere, and a line below warning
// level before it is its precursor.
func (rc rankCtx) tier(f int32) uint8 {
	if rc.warnIncident[f] && rc.serviceWeight(f) > 0 {
		return lvWarn
	}
	return lvError
}

// incidentWord names what file f's incident is made of.
func (rc rankCtx) incidentWord(f int32) string {
	if rc.tier(f) == lvWarn {
		return "rise of warnings"
	}
	return "bursts of errors"
}

// scored is a candidate with its score and reasons.
type scored struct {
	c       *cand
	score   float64
	reasons []string
}

// mkey identifies a candidate across the clusters the miner merged.
type mkey struct {
	id    string
	shape uint64
}

// templateGroups returns, by final template id, the clusters the miner
// merged into it that have events.
func (e *engine) templateGroups(rc rankCtx) map[string][]int32 {
	groups := map[string][]int32{}
	for i := range e.cl {
		if e.cl[i].count > 0 {
			groups[rc.ids[i]] = append(groups[rc.ids[i]], int32(i))
		}
	}
	return groups
}

// maxGroupScan is the most clusters of one template whose returns and
// escalations are looked for (the checks compare each pair).
const maxGroupScan = 64

// templateReturns finds each template's return after a silence (see
// returns), by final template id: the earliest of its clusters' own
// returns and of its clusters' first events (the miner may have put a
// template's events in several clusters that it merged at the end, so a
// cluster's first event after the last of the template's other clusters
// that started before it is a return too). A cluster's own return counts
// only when no other cluster of the template ran into its silence.
func (e *engine) templateReturns(groups map[string][]int32) map[string]episode {
	// silent reports whether the template's clusters other than self
	// that started before line at ended a silence before it, and returns
	// the last line of those.
	silent := func(at int, atMS int64, file int32, self int32, g []int32) (int, bool) {
		prev := 0
		for _, z := range g {
			cz := &e.cl[z]
			if z == self || cz.file != file || cz.first >= at {
				continue
			}
			if cz.last >= at-returnGapLines || cz.lastFile != file {
				return 0, false
			}
			if atMS != 0 && cz.lastMS != 0 {
				if atMS-cz.lastMS < returnGapMS {
					return 0, false
				}
			} else if at-cz.last < returnGapUntimed {
				return 0, false
			}
			prev = max(prev, cz.last)
		}
		return prev, true
	}
	return earliestPerTemplate(groups, func(cl int32, g []int32) []episode {
		var eps []episode
		if ep, ok := e.returns[cl]; ok {
			if prev, ok := silent(ep.head, 0, ep.file, cl, g); ok {
				ep.cluster, ep.prev = cl, max(ep.prev, prev)
				eps = append(eps, ep)
			}
		}
		if cs := &e.cl[cl]; len(g) > 1 {
			// not after another cluster of the template when prev is 0
			if prev, ok := silent(cs.first, cs.firstMS, cs.file, cl, g); ok && prev > 0 {
				ep := e.firstEventEpisode(cl, g)
				ep.prev, ep.silences = prev, 1
				if own, ok := e.returns[cl]; ok {
					ep.silences += own.silences
				}
				eps = append(eps, ep)
			}
		}
		return eps
	})
}

// earliestPerTemplate returns, by final template id, the earliest of the
// episodes found returns for each of the template's clusters (given with
// all of them, g). Templates of more than maxGroupScan clusters are left
// out: the checks compare each pair.
func earliestPerTemplate(groups map[string][]int32, found func(cl int32, g []int32) []episode) map[string]episode {
	out := map[string]episode{}
	for id, g := range groups {
		if len(g) > maxGroupScan {
			continue
		}
		for _, cl := range g {
			for _, ep := range found(cl, g) {
				if best, ok := out[id]; !ok || ep.head < best.head {
					out[id] = ep
				}
			}
		}
	}
	return out
}

// firstEventEpisode is cluster cl's first event as an episode of its
// template, after the events of the template's clusters g that started
// before it.
func (e *engine) firstEventEpisode(cl int32, g []int32) episode {
	cs := &e.cl[cl]
	ep := episode{cluster: cl, file: cs.file, head: cs.first, line: cs.first, text: cs.text, headText: cs.text}
	for _, z := range g {
		if e.cl[z].first < cs.first {
			ep.before += e.cl[z].count
		}
	}
	return ep
}

// templateEscalations finds each template's escalation (see
// noteEscalation), by final template id: the earliest of its clusters' own
// escalations and of its clusters' first events at a level above that of
// every cluster of the template that started before them (the miner may
// have put the template's info and warning lines in clusters it merged
// at the end).
func (e *engine) templateEscalations(groups map[string][]int32) map[string]episode {
	// below returns the highest level of the template's clusters other
	// than self that started before line at in file, and whether it is
	// below lvl (false when there are none).
	below := func(at int, file, self int32, lvl uint8, g []int32) (uint8, bool) {
		var top uint8
		any := false
		for _, z := range g {
			cz := &e.cl[z]
			if z == self || cz.file != file || cz.first >= at {
				continue
			}
			if cz.level >= lvl {
				return 0, false
			}
			top, any = max(top, cz.level), true
		}
		return top, any
	}
	return earliestPerTemplate(groups, func(cl int32, g []int32) []episode {
		var eps []episode
		if ep, ok := e.escalations[cl]; ok {
			if from, any := below(ep.head, ep.file, cl, ep.level, g); !any || from < ep.level {
				eps = append(eps, ep)
			}
		}
		if cs := &e.cl[cl]; len(g) > 1 && cs.firstLevel >= lvWarn {
			if from, any := below(cs.first, cs.file, cl, cs.firstLevel, g); any && from > lvNone {
				ep := e.firstEventEpisode(cl, g)
				ep.from, ep.level = from, cs.firstLevel
				eps = append(eps, ep)
			}
		}
		return eps
	})
}

// comeback reports whether a template that background would take for one
// fell silent once, after showing up only briefly early on, and came back
// past the log's first quarter: a one-off episode and the incident later,
// not a template that recurs all day (which, when it pauses, pauses again).
func comeback(c *cand, ep episode, ok bool, files []*fileState) bool {
	if !ok || ep.file != c.file || ep.silences != 1 {
		return false
	}
	n := float64(files[c.file].lines)
	return float64(ep.head) > bgEdge*n && float64(ep.prev-c.head) < briefEpisode*n
}

// escalatedLate reports whether a template that background would take for
// one was a warning or an error only after the log's first quarter: what
// recurred all day was its info lines.
func escalatedLate(c *cand, ep episode, ok bool, files []*fileState) bool {
	return ok && ep.file == c.file && ep.from < lvWarn && float64(ep.head) > bgEdge*float64(files[c.file].lines)
}

// briefEpisode is the share of a log's lines within which a template's
// events before a comeback were all printed.
const briefEpisode = 0.05

// backCands turns the returns of templates of warnings and errors into
// candidates of their own, shown at the return and counted from it;
// those of background errors are left out. score keeps them only where
// they fall just before the errors.
func (e *engine) backCands(rc rankCtx, groups map[string][]int32, rets, escs map[string]episode, merged map[mkey]*cand) []*cand {
	var out []*cand
	add := func(id string, ep episode, esc bool) {
		orig := merged[mkey{id, ep.sub}]
		if orig == nil || orig.bg || orig.level < lvWarn || orig.file != ep.file || ep.head <= orig.head {
			return
		}
		var total int64
		for _, z := range groups[id] {
			total += e.cl[z].count
		}
		c := &cand{cluster: ep.cluster, file: ep.file, line: ep.line, head: ep.head, text: ep.text, headText: ep.headText,
			count: max(1, total-ep.before), lastFile: orig.lastFile, lastLine: orig.lastLine, level: orig.level,
			keyPri: ep.keyPri, sub: ep.sub, back: orig.head}
		if esc {
			c.level, c.escFrom = max(ep.level, lvWarn), ep.from
		}
		out = append(out, c)
	}
	for id, ep := range rets {
		if orig := merged[mkey{id, ep.sub}]; orig != nil && float64(ep.prev-orig.head) < briefEpisode*float64(rc.files[ep.file].lines) {
			add(id, ep, false) // only a template that showed up briefly before its silence
		}
	}
	for id, ep := range escs {
		if r, ok := rets[id]; ok && r.head == ep.head {
			continue // the return is this line already
		}
		add(id, ep, true)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].line < out[j].line
	})
	return out
}

// rank scores the candidates and returns the top n, one per candidate.
func (e *engine) rank(rc rankCtx, n int) []Evidence {
	// Clusters the miner merged at Finish share a final id: merge their
	// candidates too.
	merged := map[mkey]*cand{}
	var all []*cand
	put := func(c *cand) {
		k := mkey{rc.ids[c.cluster], c.sub}
		m := merged[k]
		if m == nil {
			cp := *c
			merged[k] = &cp
			all = append(all, &cp)
			return
		}
		// The merged candidate shows the first line at its highest
		// level: the miner may fold an error line into a template whose
		// first line is an empty or progress line.
		earlier := c.file < m.file || c.file == m.file && c.head < m.head
		if c.level > m.level || c.level == m.level && earlier {
			m.cluster, m.file, m.line, m.head, m.text, m.headText, m.keyPri = c.cluster, c.file, c.line, c.head, c.text, c.headText, c.keyPri
		}
		m.count += c.count
		m.level = max(m.level, c.level)
		if c.lastFile > m.lastFile || c.lastFile == m.lastFile && c.lastLine > m.lastLine {
			m.lastFile, m.lastLine = c.lastFile, c.lastLine
		}
	}
	for i := range e.cl {
		cs := &e.cl[i]
		if cs.count == 0 || cs.count == cs.keyed {
			continue
		}
		c := &cand{cluster: int32(i), file: cs.file, line: cs.first, head: cs.first, text: cs.text, headText: cs.text,
			count: cs.count - cs.keyed, lastFile: cs.lastFile, lastLine: cs.last, level: cs.level}
		if cs.annBy > 0 && cs.keyed == 0 {
			// the message an error line announced is that error
			c.annBy, c.level = cs.annBy, max(c.level, lvError)
		}
		put(c)
	}
	for _, c := range e.subs {
		put(c)
	}
	rc.first = map[string]int{}
	for i := range e.cl {
		cs := &e.cl[i]
		if cs.count == 0 {
			continue
		}
		k := rc.ids[i] + "\x00" + strconv.Itoa(int(cs.file))
		if f, ok := rc.first[k]; !ok || cs.first < f {
			rc.first[k] = cs.first
		}
	}
	// Errors that recur through a whole service log are its background;
	// the incident's first error (its onset) and its last are the first
	// and the last of the others.
	rc.onset, rc.onsetMS, rc.warnOnset = map[int32]int{}, map[int32]int64{}, map[int32]int{}
	lastErr := map[int32]int{}
	// The lines of Gradle's account of a failure report it, whatever
	// their words (see wrongStart).
	for _, c := range all {
		if r, ok := regionOf(rc.files[c.file].steps.wrong, c.line); ok && !reWrapper.MatchString(c.text) && !reSummary.MatchString(c.text) && !verdictOnly(c.text) {
			c.wrong = r[0] - 1
			c.level = max(c.level, lvError)
		}
	}
	groups := e.templateGroups(rc)
	rets, escs := e.templateReturns(groups), e.templateEscalations(groups)
	for _, c := range all {
		ep, ok := rets[rc.ids[c.cluster]]
		esc, escOK := escs[rc.ids[c.cluster]]
		c.bg = background(c, rc.files) && !comeback(c, ep, ok, rc.files) && !escalatedLate(c, esc, escOK, rc.files)
		if !c.bg && c.level == lvWarn {
			if o, ok := rc.warnOnset[c.file]; !ok || c.head < o {
				rc.warnOnset[c.file] = c.head
			}
		}
		if c.bg || c.level < lvError {
			continue
		}
		if o, ok := rc.onset[c.file]; !ok || c.head < o {
			rc.onset[c.file] = c.head
			rc.onsetMS[c.file] = e.firstMS(c)
		}
		if c.lastLine > lastErr[c.lastFile] {
			lastErr[c.lastFile] = c.lastLine
		}
	}
	rc.incident, rc.incidentMS, rc.warnIncident = map[int32]int{}, map[int32]int64{}, map[int32]bool{}
	for f, bs := range rc.bursts {
		if start, ok := incidentStart(bs); ok {
			rc.incident[f] = start
			for _, b := range bs {
				if b.StartLine == start {
					rc.incidentMS[f] = b.startMS
				}
			}
		}
	}
	// A log too sparse (or without the timestamps) for a minute's burst
	// of errors: the incident starts where its rate of errors rose.
	for f, fs := range rc.files {
		if _, ok := rc.incident[int32(f)]; ok {
			continue
		}
		h, lvl := fs.errs, uint8(lvError)
		if fs.errors < minChangeErrors {
			// a log whose incident only warns: where its warnings rose
			h, lvl = fs.warns, lvWarn
		}
		if cp := changePoint(h, fs.lines); cp > 0 {
			// the first error line at or after it: a template's first
			// one, or the bucket's start
			start := 0
			for _, c := range all {
				if int(c.file) == f && c.level >= lvl && !c.bg && c.head >= cp && (start == 0 || c.head < start) {
					start = c.head
				}
			}
			if start == 0 {
				start = cp
			}
			rc.incident[int32(f)] = start
			if lvl == lvWarn {
				rc.warnIncident[int32(f)] = true
			}
		}
	}
	rc.novel = novelty(e.cl, len(rc.files))
	foretold(all, rc)
	all = append(all, e.backCands(rc, groups, rets, escs, merged)...)
	all = append(all, e.changeCands(rc, groups, merged)...)
	all = shortlist(all, maxScored)
	rc.lastBeforeStop = lastBeforeStop(all)
	warnVerdicts(all)
	var out []scored
	for _, c := range all {
		s := e.score(c, rc, lastErr)
		// A warning counts with less: in a log that never errs, its few
		// warnings are what there is to see.
		if s.score >= 2 || c.level >= lvWarn && s.score >= 1 {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		if out[i].c.file != out[j].c.file {
			return out[i].c.file < out[j].c.file
		}
		return out[i].c.line < out[j].c.line
	})
	// One line per template and text: repeated causes collapse.
	seen := map[string]bool{}
	ev := []Evidence{}
	for _, s := range diversify(out, rc) {
		if len(ev) >= n {
			break
		}
		key := rc.ids[s.c.cluster] + "\x00" + digitless(s.c.text)
		if s.c.back > 0 {
			key += fmt.Sprintf("\x00back%d", s.c.escFrom)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		ev = append(ev, Evidence{
			File:       rc.files[s.c.file].name,
			Line:       s.c.line,
			Text:       s.c.text,
			Reason:     strings.Join(s.reasons, "; "),
			Score:      math.Round(s.score*100) / 100,
			TemplateID: rc.ids[s.c.cluster],
		})
	}
	return ev
}

func (e *engine) score(c *cand, rc rankCtx, lastErr map[int32]int) scored {
	s := scored{c: c}
	if c.back > 0 && !e.backInWindow(c, rc) {
		// a return anywhere else says nothing its first event does not
		return s
	}
	add := func(w float64, why string) {
		s.score += w
		if why != "" {
			s.reasons = append(s.reasons, why)
		}
	}
	if c.sub == 0 && int(c.cluster) < len(rc.texts) && locationOnly(strings.ReplaceAll(rc.texts[c.cluster], "<*>", "0")) {
		// a head that only names where its message came from: the
		// message, on the next line, is an event of its own (see
		// locationOnly)
		return s
	}
	cl := &e.cl[c.cluster]
	fs := rc.files[c.file]
	text := c.text
	both := text
	if c.headText != text {
		both = c.headText + "\n" + text
	}
	switch c.level {
	case lvFatal:
		add(3, "fatal")
	case lvError:
		add(2, "error")
	case lvWarn:
		add(1, "warning")
	}
	if c.count == 1 {
		add(1, "seen once")
	} else {
		add(1/math.Sqrt(float64(c.count)), fmt.Sprintf("%d times", c.count))
	}
	// A line that names a known cause is no generic wrapper, whatever it
	// adds: "No space left on device: '/tmp/…'. Please see the spill
	// worker log for more details."
	wrapper := reWrapper.MatchString(text) && knownIssue(text) == ""
	summary := !wrapper && (reSummary.MatchString(text) || verdictOnly(text))
	crash := reCrash.MatchString(both)
	if crash {
		add(2.5, "crash marker")
	} else if reExit.MatchString(text) && !wrapper && !summary {
		add(1, "exit marker")
	}
	switch c.keyPri {
	case keyCause:
		add(1.5, fmt.Sprintf("root cause of the stack trace at L%d", c.head))
	case keyRoot:
		add(1.2, fmt.Sprintf("exception ending the trace at L%d", c.head))
	case keyExc:
		add(1, fmt.Sprintf("exception of the event at L%d", c.head))
	case keyWarn:
		add(0.5, fmt.Sprintf("warning inside the event at L%d", c.head))
	}
	// The first error after normal operation says most in a service
	// log; in a build log, whose every line says something new, the first
	// error is as often a download retried or a name with "error" in it:
	// the weight fades from 1.5 to 0.5 as the file's novelty rises (see pw
	// below).
	if stop, ok := rc.lastBeforeStop[[2]int{int(c.file), c.line}]; ok {
		add(2, fmt.Sprintf("last output before the runner stopped the job at L%d", stop))
	}
	if c.bg {
		add(-1.5, fmt.Sprintf("recurs through the whole log, L%d to L%d", c.head, c.lastLine))
	}
	if c.level >= lvError && !c.bg && c.head == rc.onset[c.file] {
		add(0.5+rc.serviceWeight(c.file), "first error")
		if o := rc.files[c.file].firstErrLine; o > 0 && o < c.head {
			s.reasons[len(s.reasons)-1] = "first error after the background ones"
		}
	}
	// The output of a CI step that failed is where its cause is; a line
	// with no level counts there when it points at source or is among the
	// last before the runner's exit report. Errors printed by steps that
	// passed are not why the run failed.
	located := reLocated.MatchString(text) && !reDependencyPath.MatchString(text)
	failedStep := false
	if r, ok := regionOf(fs.steps.failed, c.line); ok && !wrapper && !summary {
		if c.level >= lvWarn || located || c.line >= r[1]-stepTail {
			failedStep = true
			add(1.5, fmt.Sprintf("output of the step that failed at L%d", r[1]))
		}
	} else if r, ok := regionOf(fs.steps.passed, c.line); ok && c.lastFile == c.file && c.level >= lvWarn {
		if _, ok := regionOf(fs.steps.passed, c.lastLine); ok {
			add(-3, fmt.Sprintf("printed by a step that passed at L%d", r[1]))
		}
	}
	// Likewise for a test runner's tests: what a test that passed printed
	// (an error logged on purpose, a panic it recovered) did not fail it.
	// A line belongs to the smallest test region holding it: a subtest's
	// inside its parent's.
	if r, passed, ok := fs.steps.testOf(c.line); ok && c.level >= lvWarn {
		if passed && c.lastFile == c.file {
			if r2, passed2, ok := fs.steps.testOf(c.lastLine); ok && passed2 {
				add(-3, fmt.Sprintf("printed by a test that passed at L%d", r2[1]))
			}
		} else if !passed && !wrapper && !summary {
			add(1, fmt.Sprintf("output of the test that failed at L%d", r[1]))
		}
	}
	// A failed Gradle task's output, inside the CI step or not.
	if r, ok := regionOf(fs.steps.tasks, c.line); ok && !wrapper && !summary && (c.level >= lvWarn || located) {
		failedStep = true
		add(1, fmt.Sprintf("output of the task that failed at L%d", r[1]))
	}
	if c.wrong > 0 {
		w := 1.0
		if gradleCause(text) {
			w = 1.5 // one of the causes it nests
		}
		add(w, fmt.Sprintf("Gradle's account of what went wrong at L%d", c.wrong))
	}
	if r, ok := regionOf(fs.steps.hunks, c.line); ok && c.level >= lvWarn {
		if reDiffReport.MatchString(text) {
			// pg_regress's and other harnesses' expected-versus-actual
			// output: an added report is what the program printed instead
			add(1, fmt.Sprintf("printed instead of the expected output (diff at L%d)", r[0]-1))
		} else {
			add(-3, fmt.Sprintf("a line of the diff at L%d", r[0]-1))
		}
	}
	if r, ok := regionOf(fs.steps.scripts, c.line); ok && c.level >= lvWarn {
		add(-3, fmt.Sprintf("a line of the script the runner echoed at L%d", r[0]-1))
	}
	if r, ok := regionOf(fs.steps.runner, c.line); ok && c.level >= lvWarn && !wrapper && !summary {
		add(-2.5, fmt.Sprintf("printed by the CI runner's own stage at L%d", r[0]))
	}
	if (c.level >= lvError || failedStep && c.level == lvNone) && !wrapper && !summary && located {
		add(1, "points at a source line")
	}
	if le := lastErr[c.lastFile]; le > 0 && c.lastLine == le && c.level >= lvError && !c.bg {
		add(1, "last error before the end")
	}
	if fs.lines > 0 && c.lastLine > rc.files[c.lastFile].lines-20 && (c.level >= lvWarn || crash) {
		add(0.7, "near the end of the log")
	}
	// What preceded the first error and each burst: templates that first
	// appear there, after the start-up phase.
	// A build log says something new on most lines, so there a template
	// that is new before the errors says nothing: the weight fades out as
	// the file's novelty rises from 0.2 to 0.5 templates per event.
	pw := rc.serviceWeight(c.file)
	// A template back after a silence counts as new (see returns).
	isNew := func() bool {
		return c.back > 0 || rc.first[rc.ids[c.cluster]+"\x00"+strconv.Itoa(int(c.file))] == c.head
	}
	newWord := "new"
	if c.back > 0 {
		newWord = fmt.Sprintf("back after a silence (first at L%d)", c.back)
		if c.escFrom > lvNone {
			newWord = fmt.Sprintf("first at %s level (%s before, first at L%d)", levelName(c.level), levelName(c.escFrom), c.back)
		}
	}
	if c.foretold > 0 {
		add(foretoldWeight*pw, fmt.Sprintf("warned of the errors at L%d", c.foretold))
	}
	if c.failedFor > 0 {
		// the nearer the verdict, the likelier the warning it counted
		near := 1 - float64(c.failedFor-c.line)/float64(warnVerdictWindow)
		add(1.5*near, fmt.Sprintf("a warning the run failed for at L%d", c.failedFor))
	}
	if c.change > 0 {
		add(changeWeight*pw, changeReason(c))
	} else if c.level < rc.tier(c.file) && c.sub == 0 && pw > 0 {
		for _, st := range precursorStarts(rc, c.file) {
			if e.precedes(c, st) && isNew() {
				w := 2.5
				if c.level == lvWarn {
					w = 3
				}
				add(w*pw, fmt.Sprintf("%s %d lines before the errors starting at L%d", newWord, st.line-c.head, st.line))
				break
			}
		}
	}
	// Likewise an error first seen shortly before a service log's largest
	// burst of errors, or starting it (a build log's minutes say little).
	if b, ok := rc.incident[c.file]; ok && pw > 0 && c.level >= rc.tier(c.file) && !c.bg && c.head <= b && c.head >= b-incidentWindow && isNew() {
		if c.head == b {
			add(1.5*pw, fmt.Sprintf("starts the incident's %s at L%d", rc.incidentWord(c.file), b))
		} else {
			add(1.5*pw, fmt.Sprintf("%s %d lines before the incident's %s at L%d", newWord, b-c.head, rc.incidentWord(c.file), b))
		}
	}
	if c.level >= lvWarn && (assertionDetail(text) || int(c.cluster) < len(rc.texts) && assertionDetail(rc.texts[c.cluster])) {
		// what a failed assertion expected and got, read from the line
		// or, past a header, from its template
		add(1, "known issue: assertion")
	} else if c.level >= lvWarn || crash {
		if k := knownIssue(both); k != "" {
			add(1, "known issue: "+k)
		}
	}
	if c.annBy > 0 {
		add(0.5, fmt.Sprintf("the error announced at L%d", c.annBy))
	}
	msg := text
	if c.sub == 0 && int(c.cluster) < len(rc.texts) {
		msg = rc.texts[c.cluster]
	}
	if c.level >= lvWarn && (treeLine(msg) || wordless(msg) && !strings.Contains(msg, "<*>")) {
		add(-2, "a node of a tree or a bracket, not a report")
	}
	if !wrapper && reRetry.MatchString(text) {
		add(-1, "retried")
	}
	switch {
	case wrapper:
		add(-2.5, "generic wrapper")
	case summary:
		add(-2.5, "summary of failures reported elsewhere")
	}
	if rc.baseline {
		switch {
		case cl.base == 0:
			add(2.5, "absent from the good run")
		case rc.baseLines > 0 && float64(cl.count) >= 3*float64(cl.base)*float64(rc.lines)/float64(rc.baseLines) && cl.count >= 3:
			add(1, fmt.Sprintf("rose from %d in the good run", cl.base))
		default:
			add(-1.5, "also in the good run")
		}
		if rc.diverge == c.cluster {
			add(1.5, "where the run diverged")
		}
	}
	return s
}

// Warnings made errors. mkdocs --strict ("Aborted with 1 warnings in
// strict mode!"), Zephyr's Kconfig ("error: Aborting due to Kconfig
// warnings"), gcc -Werror ("cc1: all warnings being treated as errors"):
// the verdict is an error that names no cause, and the cause is a warning
// printed just before it, which ranks below every error. A warning within
// warnVerdictWindow lines before such a verdict is what the run failed
// for, the more so the nearer it is.
const warnVerdictWindow = 40

// reWarnVerdict matches a verdict that a run failed because of warnings;
// warnVerdict checks that no error is counted with them.
var reWarnVerdict = regexp.MustCompile(`(?i)\b(?:abort(?:ed|ing)?|fail(?:ed|ing|s)?|stop(?:ped|ping)?|exit(?:ed|ing)?|error)\b[^.!]{0,40}?\b(?:due to|because of|with)\b([^.!]{0,30}?)\bwarnings?\b|\bwarnings? (?:being |are |were |is )?treated as errors?\b`)

func warnVerdict(text string) bool {
	m := reWarnVerdict.FindStringSubmatch(text)
	return m != nil && !strings.Contains(strings.ToLower(m[1]), "error")
}

// warnVerdicts sets c.failedFor on the warnings shortly before a verdict
// that the run failed for its warnings.
func warnVerdicts(all []*cand) {
	var verdicts [][2]int
	for _, c := range all {
		if c.level >= lvError && warnVerdict(c.text) {
			verdicts = append(verdicts, [2]int{int(c.file), c.line})
		}
	}
	for _, v := range verdicts {
		for _, c := range all {
			if c.level == lvWarn && int(c.file) == v[0] && c.line < v[1] && c.line >= v[1]-warnVerdictWindow && (c.failedFor == 0 || v[1] < c.failedFor) {
				c.failedFor = v[1]
			}
		}
	}
}

// stopWindow is how far before a runner's notice that it stopped a job
// the job's last output is looked for (blank lines and the notice's own
// preamble come between).
const stopWindow = 6

// lastBeforeStop finds, for each runner's notice that it stopped a job,
// the nearest candidate line before it within stopWindow lines.
func lastBeforeStop(all []*cand) map[[2]int]int {
	var stops [][2]int
	for _, c := range all {
		if reRunnerStop.MatchString(c.text) {
			stops = append(stops, [2]int{int(c.file), c.line})
		}
	}
	out := map[[2]int]int{}
	for _, st := range stops {
		best := 0
		for _, c := range all {
			if int(c.file) == st[0] && c.line < st[1] && c.line >= st[1]-stopWindow && c.line > best && !reRunnerStop.MatchString(c.text) {
				best = c.line
			}
		}
		if best > 0 {
			out[[2]int{st[0], best}] = st[1]
		}
	}
	return out
}

// changePoint returns the first line of the bucket of h where the rate of
// errors rose, the single split of the file that best explains the counts
// as two rates (the likelihood ratio of a Poisson process whose rate
// changes once against one that does not); 0 when the file has fewer than
// minChangeErrors errors or no split explains them clearly better.
func changePoint(h lineHist, lines int) int {
	if h.size == 0 || lines <= h.size {
		return 0
	}
	n := 0.0
	for _, v := range h.n {
		n += float64(v)
	}
	if n < minChangeErrors {
		return 0
	}
	xlx := func(x, l float64) float64 {
		if x <= 0 {
			return 0
		}
		return x * math.Log(x/l)
	}
	L := float64(lines)
	total := xlx(n, L)
	m := (lines + h.size - 1) / h.size
	best, bestK := float64(minChangeLLR), 0
	n1 := 0.0
	for k := 1; k < m; k++ {
		if k-1 < len(h.n) {
			n1 += float64(h.n[k-1])
		}
		l1 := float64(k * h.size)
		n2, l2 := n-n1, L-l1
		if n2/l2 <= n1/l1 {
			continue
		}
		if llr := xlx(n1, l1) + xlx(n2, l2) - total; llr > best {
			best, bestK = llr, k
		}
	}
	if bestK == 0 {
		return 0
	}
	return bestK*h.size + 1
}

const (
	minChangeErrors = 5
	minChangeLLR    = 3 // natural-log likelihood ratio
)

// precursorWindow is how many lines before the first error (or a burst)
// a newly appearing template counts as what preceded it. Where a stack
// dump or a chatty stream puts more lines between them, a template first
// seen up to precursorMS before the errors, and within precursorMaxLines,
// counts too: what came just before is a matter of time, not of lines.
const (
	precursorWindow   = 60
	precursorMS       = 2 * 60 * 1000
	precursorMaxLines = 1000
)

// errStart is where errors start (the first, a burst, the incident) and,
// where the log has times, when.
type errStart struct {
	line int
	ms   int64
}

// precursorStarts returns file f's starts of errors: its onset, its
// bursts and its incident.
func precursorStarts(rc rankCtx, f int32) []errStart {
	var s []errStart
	onset := rc.onset[f]
	if onset > 0 {
		s = append(s, errStart{onset, rc.onsetMS[f]})
	}
	for _, b := range rc.bursts[f] {
		if b.StartLine != onset {
			s = append(s, errStart{b.StartLine, b.startMS})
		}
	}
	if inc := rc.incident[f]; inc > 0 && !slices.ContainsFunc(s, func(st errStart) bool { return st.line == inc }) {
		s = append(s, errStart{inc, rc.incidentMS[f]})
	}
	return s
}

// firstMS is the time of c's first event when c is its template's first
// event, 0 when unknown.
func (e *engine) firstMS(c *cand) int64 {
	if c.back > 0 || c.sub != 0 || int(c.cluster) >= len(e.cl) {
		return 0
	}
	if cl := &e.cl[c.cluster]; cl.first == c.head && cl.file == c.file {
		return cl.firstMS
	}
	return 0
}

// precedes reports whether c's event falls in the precursor window of the
// start of errors st (see precursorWindow), after the start-up phase.
func (e *engine) precedes(c *cand, st errStart) bool {
	if c.head >= st.line || c.head < max(10, st.line/5) {
		return false
	}
	if c.head >= st.line-precursorWindow {
		return true
	}
	if st.ms == 0 || c.head < st.line-precursorMaxLines {
		return false
	}
	ms := e.firstMS(c)
	return ms > 0 && ms <= st.ms && st.ms-ms <= precursorMS
}

// backInWindow reports whether a template's return or escalation c falls
// where score's precursor or incident weight counts it, before the errors:
// the weights that make such a candidate worth showing.
func (e *engine) backInWindow(c *cand, rc rankCtx) bool {
	if rc.serviceWeight(c.file) == 0 {
		return false // a build log: the weights fade to nothing
	}
	if c.level < rc.tier(c.file) && c.sub == 0 {
		for _, st := range precursorStarts(rc, c.file) {
			if e.precedes(c, st) {
				return true
			}
		}
	}
	b, ok := rc.incident[c.file]
	return ok && c.level >= rc.tier(c.file) && c.head <= b && c.head >= b-incidentWindow
}

// maxScored is the most candidates score reads with its regular
// expressions (a third of a millisecond each): a log whose every line is a
// template of its own would otherwise spend most of its analysis there.
// The logs in testdata and the generated benchmark log have at most 500.
const maxScored = 5000

// shortlist keeps, of more than n candidates, the n that its cheap part of
// score ranks highest (level, rarity, a root cause, background, a return
// or escalation, Gradle's account), the earliest first among equals.
func shortlist(all []*cand, n int) []*cand {
	if len(all) <= n {
		return all
	}
	cheap := func(c *cand) float64 {
		w := [...]float64{lvFatal: 3, lvError: 2, lvWarn: 1}[c.level] + 1/math.Sqrt(float64(max(c.count, 1)))
		if c.keyPri != keyNone {
			w += 1.5
		}
		if c.bg {
			w -= 1.5
		}
		if c.back > 0 || c.wrong > 0 || c.change > 0 {
			w += 1.5
		}
		return w
	}
	ws := make(map[*cand]float64, len(all))
	for _, c := range all {
		ws[c] = cheap(c)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if ws[a] != ws[b] {
			return ws[a] > ws[b]
		}
		if a.file != b.file {
			return a.file < b.file
		}
		return a.line < b.line
	})
	return all[:n]
}

// digitless removes digits, for de-duplicating evidence texts.
func digitless(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// verdictWords are the words of a line that says only that something
// failed: "BUILD FAILED in 1m 12s", "Finished: FAILURE", "ERRORS!",
// "FAILURE: Build failed with an exception.", "Failures:",
// "* What went wrong:", yarn's "error Command failed with exit code 1.".
// Such a line names no cause.
var verdictWords = map[string]bool{
	"build": true, "job": true, "step": true, "stage": true, "task": true, "pipeline": true, "run": true, "tests": true, "test": true,
	"finished": true, "failed": true, "failure": true, "failures": true, "fail": true, "error": true, "errors": true, "exception": true,
	"with": true, "an": true, "a": true, "in": true, "the": true, "of": true, "status": true, "result": true, "exit": true, "code": true,
	"there": true, "was": true, "were": true, "what": true, "went": true, "wrong": true, "examples": true, "summary": true,
	"h": true, "m": true, "s": true, "ms": true, "min": true, "sec": true, "secs": true, "seconds": true,
	"command": true, "exiting": true, "exited": true,
}

// verdictOnly reports whether every word of the line (after a timestamp
// prefix) is a verdict word, and one says it failed.
func verdictOnly(text string) bool {
	failed := false
	words := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) == 1 && w != "a" {
			// ISO 8601's T and Z, a level letter ("W:" in TeamCity's
			// "[09:42:05]W: [Step 3/3] BUILD FAILED")
			continue
		}
		if !verdictWords[w] {
			return false
		}
		words++
		failed = failed || strings.HasPrefix(w, "fail") || strings.HasPrefix(w, "error") || w == "wrong"
	}
	return failed && words > 0
}

// knownIssue returns the label of the first known issue s names, or "".
func knownIssue(s string) string {
	for _, k := range reKnown {
		if k.re.MatchString(s) {
			return k.label
		}
	}
	return ""
}

// Diversity. The miner keeps apart templates that differ in one word
// (GET and POST, one query parameter more), so one repeated error can
// fill the top of the list as several templates: "upstream timed out …
// request: \"GET <*>\"" and "… \"POST <*>\"". diversify reorders the
// scored candidates greedily: each pick is the best score once every
// candidate has lost a share for each pick before it whose template is a
// near copy of its own (see nearCopy).
const (
	copyPenalty  = 0.6  // score kept per near copy already picked
	nearCopyLCS  = 0.85 // share of tokens in common (see nearCopy)
	maxDiversify = 64   // picks reordered; the rest keep their order
	// candidates those picks are made from: each pick compares its
	// template with all of them
	maxDiversifyPool = 256
)

func diversify(out []scored, rc rankCtx) []scored {
	if len(out) < 2 {
		return out
	}
	toks := map[int32][]string{}
	tokens := func(cl int32) []string {
		t, ok := toks[cl]
		if !ok {
			t = strings.Fields(rc.texts[cl])
			if len(t) > maxCopyTokens {
				t = t[:maxCopyTokens]
			}
			toks[cl] = t
		}
		return t
	}
	// the best maxDiversifyPool candidates are reordered; the rest follow
	pool := min(len(out), maxDiversifyPool)
	rest := append([]scored(nil), out[:pool]...)
	res := make([]scored, 0, len(out))
	copies := make([]int, len(rest)) // near copies picked, per candidate
	like := make([]int, len(rest))   // the line of the first of them
	for len(res) < maxDiversify && len(rest) > 0 {
		best, bestScore := 0, -1.0
		for i := range rest {
			sc := rest[i].score * math.Pow(copyPenalty, float64(copies[i]))
			if sc > bestScore {
				best, bestScore = i, sc
			}
		}
		pick := rest[best]
		if copies[best] > 0 {
			// shown with the score it was ranked by, and why it is lower
			pick.score = bestScore
			pick.reasons = append(pick.reasons[:len(pick.reasons):len(pick.reasons)], fmt.Sprintf("like L%d above", like[best]))
		}
		res = append(res, pick)
		rest = append(rest[:best], rest[best+1:]...)
		copies = append(copies[:best], copies[best+1:]...)
		like = append(like[:best], like[best+1:]...)
		pt := tokens(pick.c.cluster)
		for i := range rest {
			if rest[i].c.cluster != pick.c.cluster && rc.ids[rest[i].c.cluster] != rc.ids[pick.c.cluster] &&
				nearCopy(pt, tokens(rest[i].c.cluster)) {
				if copies[i] == 0 {
					like[i] = pick.c.line
				}
				copies[i]++
			}
		}
	}
	// the rest, in their order, below the last pick
	rest = append(rest, out[pool:]...)
	floor := res[len(res)-1].score
	for i := range rest {
		rest[i].score = min(rest[i].score, floor)
	}
	return append(res, rest...)
}

// nearCopyRun is how many tokens in a row two templates share when they
// are one report with a different head or tail: Pgpool's "<app> pid <*>:
// LOG: pool_send_and_wait: Error or notice message from backend: : DB node
// id: <*> backend pid: <*> statement: …" for each client and statement
// that timed out.
const nearCopyRun = 12

// maxCopyTokens bounds the tokens of a template nearCopy compares.
const maxCopyTokens = 64

// nearCopy reports whether two templates share at least nearCopyLCS of
// the tokens of the longer one, in order (their longest common
// subsequence): the same message with a word or two changed; or
// nearCopyRun tokens in a row.
func nearCopy(a, b []string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a) == 0 || float64(len(b)) < nearCopyLCS*float64(len(a)) && len(b) < nearCopyRun {
		return false
	}
	// prev/cur: the longest common subsequence of a[:i] and b[:j];
	// rprev/rcur: the common run of tokens ending at a[i-1] and b[j-1]
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	rprev, rcur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
				rcur[j+1] = rprev[j] + 1
				if rcur[j+1] >= nearCopyRun {
					return true
				}
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
				rcur[j+1] = 0
			}
		}
		prev, cur = cur, prev
		rprev, rcur = rcur, rprev
	}
	return float64(prev[len(b)]) >= nearCopyLCS*float64(len(a))
}

// Warnings that foretold the incident. Before a pool runs dry, a disk
// fills or a limit is hit, the software often warns of it in the words of
// the error to come: "max-values-per-tag limit may be exceeded soon", then
// "partial write: max-values-per-tag limit exceeded". An engineer searches
// the log for the error's distinctive words and finds the warning. A
// warning whose template shares foretoldMinShared distinctive words (see
// distinctive) with an error template first seen within incidentWindow
// lines of the incident's start, before that error, foretold it.
const (
	foretoldMinShared = 2
	foretoldWeight    = 2.0
	// a word in more than this share of a file's templates is not
	// distinctive
	foretoldMaxShare = 0.02
)

// foretold sets c.foretold on the warnings that foretold their file's
// incident.
func foretold(all []*cand, rc rankCtx) {
	type fileWords struct {
		df    map[string]int // templates holding each word
		n     int
		start int
	}
	files := map[int32]*fileWords{}
	for f, start := range rc.incident {
		files[f] = &fileWords{df: map[string]int{}, start: start}
	}
	if len(files) == 0 {
		return
	}
	words := map[int32][]string{}  // by cluster
	counted := map[[2]int32]bool{} // file and cluster
	for _, c := range all {
		fw := files[c.file]
		if fw == nil || counted[[2]int32{c.file, c.cluster}] {
			continue
		}
		counted[[2]int32{c.file, c.cluster}] = true
		ws, ok := words[c.cluster]
		if !ok {
			ws = templateWords(rc.texts[c.cluster])
			words[c.cluster] = ws
		}
		fw.n++
		for _, w := range ws {
			fw.df[w]++
		}
	}
	// the distinctive words of the errors that start each incident
	errWords := map[int32]map[string]int{} // word -> the error's line
	for _, c := range all {
		fw := files[c.file]
		if fw == nil || c.level < lvError || c.bg || c.head < fw.start-incidentWindow || c.head > fw.start+incidentWindow {
			continue
		}
		for _, w := range words[c.cluster] {
			if distinctive(w, fw.df[w], fw.n) {
				m := errWords[c.file]
				if m == nil {
					m = map[string]int{}
					errWords[c.file] = m
				}
				if l, ok := m[w]; !ok || c.head < l {
					m[w] = c.head
				}
			}
		}
	}
	for _, c := range all {
		fw := files[c.file]
		m := errWords[c.file]
		if fw == nil || m == nil || c.level != lvWarn || c.bg || c.head < max(10, fw.start/5) {
			continue
		}
		shared, at := 0, 0
		for _, w := range words[c.cluster] {
			if l, ok := m[w]; ok {
				shared++
				if at == 0 || l < at {
					at = l
				}
			}
		}
		if shared >= foretoldMinShared && c.head < at {
			c.foretold = at
		}
	}
}

// templateWords returns the distinct words of a template, lower case:
// runs of letters, digits, '-' and '_' holding a letter, of at least four
// bytes, less its wildcards.
func templateWords(t string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(t, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		w = strings.Trim(w, "-_")
		if len(w) < 4 || strings.IndexFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) < 0 {
			continue
		}
		w = strings.ToLower(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// distinctive reports whether a word held by df of a file's n templates
// says what the error is about: not a failure word every error shares,
// and in few of the file's templates.
func distinctive(w string, df, n int) bool {
	if genericWords[w] {
		return false
	}
	return float64(df) <= max(2, foretoldMaxShare*float64(n))
}

// genericWords are words of failures in general, not of one failure.
var genericWords = map[string]bool{
	"error": true, "errors": true, "failed": true, "failure": true, "fail": true, "fails": true, "warn": true, "warning": true,
	"exception": true, "exceeded": true, "unable": true, "cannot": true, "could": true, "timeout": true, "timed": true,
	"retry": true, "retrying": true, "will": true, "with": true, "from": true, "this": true, "that": true, "soon": true,
	"request": true, "response": true, "status": true, "code": true, "message": true, "reason": true, "caused": true,
}
