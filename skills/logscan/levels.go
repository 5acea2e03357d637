package logscan

import (
	"regexp"
	"strings"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// Levels, ordered by severity.
const (
	lvNone uint8 = iota
	lvTrace
	lvDebug
	lvInfo
	lvWarn
	lvError
	lvFatal
)

var levelNames = [...]string{"", miner.LevelTrace, miner.LevelDebug, miner.LevelInfo, miner.LevelWarn, miner.LevelError, miner.LevelFatal}

func levelName(l uint8) string { return levelNames[l] }

func levelOf(name string) uint8 {
	switch name {
	case miner.LevelTrace:
		return lvTrace
	case miner.LevelDebug:
		return lvDebug
	case miner.LevelInfo:
		return lvInfo
	case miner.LevelWarn:
		return lvWarn
	case miner.LevelError:
		return lvError
	case miner.LevelFatal:
		return lvFatal
	}
	return lvNone
}

// levelWord maps a level word (upper case) to a level; with the header
// detector's short forms (zerolog's console "WRN", "INF", log15's "EROR").
func levelWord(w string) uint8 {
	switch w {
	case "ERROR", "ERR", "EROR", "SEVERE", "FAILED":
		return lvError
	case "FATAL", "FATL", "FTL", "CRIT", "CRITICAL", "PANIC", "ALERT", "EMERG", "EMERGENCY":
		return lvFatal
	case "WARN", "WARNING", "WRN":
		return lvWarn
	case "INFO", "INF", "NOTICE", "NOTE":
		return lvInfo
	case "DEBUG", "DBG", "DBUG", "FINE", "VERBOSE":
		return lvDebug
	case "TRACE", "TRC", "FINER", "FINEST":
		return lvTrace
	}
	return lvNone
}

func letterLevel(c byte) uint8 {
	switch c {
	case 'E':
		return lvError
	case 'F':
		return lvFatal
	case 'W':
		return lvWarn
	case 'I':
		return lvInfo
	case 'D':
		return lvDebug
	case 'V':
		return lvTrace
	}
	return lvNone
}

// leadingLevel reads a level the message itself opens with, as a logger
// writes it inside another's line: the Java Service Wrapper prints every
// line of the JVM as "INFO   | jvm 1    | 2024/06/03 06:15:00 | E [Timer]
// msg", a supervisor or container runtime likewise. A level letter before
// " [" ("E [Timer]", "W [c.i.LicenseManager]") or a level word in capitals,
// bracketed or not, before a space, ':' or ']' ("ERROR [main]",
// "[WARN] disk", "FATAL: x"); lvNone otherwise.
func leadingLevel(msg string) uint8 {
	m := msg
	if m != "" && m[0] == '[' {
		m = m[1:]
	}
	if len(m) < 3 || m[0] < 'A' || m[0] > 'Z' {
		return lvNone
	}
	if m[1] == ' ' && m[2] == '[' && m[0] != 'I' {
		return letterLevel(m[0])
	}
	n := 0
	for n < len(m) && n <= 9 && m[n] >= 'A' && m[n] <= 'Z' {
		n++
	}
	if n < 3 || n > 9 || n < len(m) && m[n] != ' ' && m[n] != ':' && m[n] != ']' {
		return lvNone
	}
	return levelWord(m[:n])
}

// wrappedLevel is leadingLevel of a message, or of its part after the
// wrapper's other columns: "jvm 1    | 2024/06/03 06:15:00 | E [Timer]
// msg".
func wrappedLevel(msg string) uint8 {
	if head := msg[:min(len(msg), 64)]; strings.IndexByte(head, '|') >= 0 {
		if i := strings.LastIndex(head, " | "); i >= 0 {
			msg = strings.TrimLeft(msg[i+3:], " ")
		}
	}
	return leadingLevel(msg)
}

// levelScanBytes is how far into a line the fallback level detector looks.
const levelScanBytes = 96

// detectLevel finds a level in the header area of a line when the header
// detector gave none: upper-case level words (ERROR, [WARN], <E>),
// level=error / "level":"error", syslog priorities <3>, and one-letter
// levels in the ESP-IDF ("E (123)"), Android ("E/Tag", "  123  456 E Tag")
// and glog ("E1129 10:00:00", also after a syslog prefix) shapes; yarn's leading "info", and the
// symbols Node.js CLIs print as levels (see levelSymbols).
func detectLevel(line string) uint8 {
	if indentedFrame(line) {
		return lvNone // most lines without a header in a Java log
	}
	s := line
	if len(s) > levelScanBytes {
		// Cut at a word's end: the start of "FOR" left as "F" would read
		// as a one-letter level.
		s = s[:levelScanBytes]
		for len(s) > 0 && isAlnumByte(s[len(s)-1]) && isAlnumByte(line[len(s)]) {
			s = s[:len(s)-1]
		}
	}
	if strings.HasPrefix(s, "info ") {
		return lvInfo
	}
	if l := symbolLevel(s); l != lvNone {
		return l
	}
	if l := resultLevel(s); l != lvNone {
		return l
	}
	if l := ctestLevel(s); l != lvNone {
		return l
	}
	if len(s) >= 2 {
		c := s[0]
		if l := letterLevel(c); l != lvNone {
			switch {
			case len(s) >= 3 && s[1] == ' ' && s[2] == '(':
				return l
			case s[1] == '/' && len(s) > 2 && isAlpha(s[2]):
				return l
			case len(s) >= 5 && isDigit(s[1]) && isDigit(s[2]) && isDigit(s[3]) && isDigit(s[4]):
				return l
			}
		}
		if c == '<' {
			if i := strings.IndexByte(s, '>'); i > 1 && i <= 4 && allDigits(s[1:i]) {
				p := atoi(s[1:i]) % 8
				switch {
				case p <= 2:
					return lvFatal
				case p == 3:
					return lvError
				case p == 4:
					return lvWarn
				case p <= 6:
					return lvInfo
				default:
					return lvDebug
				}
			}
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if !isAlpha(c) {
			i++
			continue
		}
		j := i
		for j < len(s) && isAlpha(s[j]) {
			j++
		}
		w := s[i:j]
		var before byte = ' '
		if i > 0 {
			before = s[i-1]
		}
		var after byte = ' '
		if j < len(s) {
			after = s[j]
		}
		if len(w) >= 3 && len(w) <= 9 && isUpperWord(w) && !(before == '_' && i >= 2 && isAlnumByte(s[i-2])) {
			// (after "X_" it is part of a name: HAVE_WNO_ERROR_DATE_TIME;
			// an error code such as ERR_PNPM_OUTDATED_LOCKFILE starts with
			// it, and amavis writes "_WARN:")
			if l := levelWord(w); l != lvNone && (j == len(s) || !isAlpha(after)) {
				// "FAILED" is a level only when it stands as one: [FAILED];
				// none opens an Elm report's heading ("-- DEBUG REMNANTS ---").
				if (w != "FAILED" || before == '[') && !(before == ' ' && i >= 3 && s[i-3:i] == "-- ") {
					return l
				}
			}
		}
		if len(w) == 1 && before == ' ' && glogStamp(s[j:]) {
			// klog/glog after a syslog or journald prefix:
			// "kubelet[1187]: W0603 10:26:41.208086 …"
			if l := letterLevel(w[0]); l != lvNone {
				return l
			}
		}
		if len(w) == 1 && (before == ' ' || before == '[') && (after == ' ' || after == ']') && i >= 8 {
			// Android threadtime: "... 1234  5678 E Tag: msg"; bracketed [E].
			if l := letterLevel(w[0]); l != lvNone && (before == '[' && after == ']' || isDigit(lastNonSpace(s[:i]))) {
				return l
			}
		}
		if len(w) >= 3 && len(w) <= 8 && (before == '=' || before == '"' || before == '[') {
			lw := strings.ToLower(w)
			if prefixKey(s[:i]) || before == '[' {
				if l := levelWord(strings.ToUpper(lw)); l != lvNone && w != "FAILED" {
					return l
				}
			}
		}
		i = j
	}
	return lvNone
}

// glogStamp reports whether s starts with the date and time that follow
// a glog level letter: "0603 10:26:41".
func glogStamp(s string) bool {
	return len(s) >= 8 && allDigits(s[:4]) && s[4] == ' ' && isDigit(s[5]) && isDigit(s[6]) && s[7] == ':'
}

// levelSymbols are the symbols Node.js CLIs print as a line's level
// (log-symbols, signale, listr), with the level each stands for: a step
// that went well is info, whatever words follow ("✔ Completed step
// \"fail\"").
var levelSymbols = [...]struct {
	sym string
	lv  uint8
}{{"ℹ", lvInfo}, {"⚠", lvWarn}, {"✖", lvError}, {"✘", lvError}, {"✗", lvError}, {"❌", lvError}, {"✔", lvInfo}, {"✓", lvInfo}, {"✅", lvInfo}}

// symbolLevel finds a level symbol standing as a word in s (after the
// start or a space, before a space or an emoji variation selector).
func symbolLevel(s string) uint8 {
	if strings.IndexByte(s, 0xe2) < 0 {
		return lvNone
	}
	for _, ls := range levelSymbols {
		i := strings.Index(s, ls.sym)
		if i < 0 || i > 0 && s[i-1] != ' ' {
			continue
		}
		if rest := s[i+len(ls.sym):]; rest == "" || rest[0] == ' ' || strings.HasPrefix(rest, "\uFE0F") {
			return ls.lv
		}
	}
	return lvNone
}

// resultLevel reads the result a test runner prints before a test's name,
// bun's "(pass) ", "(fail) ", "(skip) " and "(todo) " and TAP's "ok 4 - "
// and "not ok 4 - " (also behind ctest's "1: "), and Rollup's warning
// mark "(!) ", at the start of the line
// or after a header of no lower-case word (a timestamp) in its first 48
// bytes: a failed test is an error, the others are info whatever their
// names say ("(pass) rejects NaN with an error", "ok 5 - corrupt checksum
// fails with ERR_CHECKSUM").
func resultLevel(s string) uint8 {
	i := 0 // the first lower-case letter or '(' after the header
	for i < len(s) && i < 48 && s[i] != '(' && (s[i] < 'a' || s[i] > 'z') {
		i++
	}
	if i == len(s) || i == 48 || i > 0 && s[i-1] != ' ' && s[i-1] != '\t' {
		return lvNone
	}
	r := s[i:]
	if r[0] == '(' {
		if strings.HasPrefix(r, "(!) ") {
			return lvWarn // Rollup's and Vite's warnings: "(!) Circular dependency"
		}
		if len(r) < 7 || r[5] != ')' || r[6] != ' ' {
			return lvNone
		}
		switch r[1:5] {
		case "fail":
			return lvError
		case "pass", "skip", "todo":
			return lvInfo
		}
		return lvNone
	}
	lv := lvInfo
	if rest, ok := strings.CutPrefix(r, "not "); ok {
		lv, r = lvError, rest
	}
	if len(r) < 4 || r[:3] != "ok " || !isDigit(r[3]) {
		return lvNone
	}
	return lv
}

// ctestLevel reads ctest's progress lines, whatever the test's name says:
// "    Start  3: errors" is info, and so is "3/4 Test  #3: errors ....
// Passed    0.35 sec"; a result of "***Failed", "***Timeout",
// "***Exception: …" or "Not Run" is an error.
func ctestLevel(s string) uint8 {
	t := strings.TrimLeft(s, " ")
	if rest, ok := strings.CutPrefix(t, "Start "); ok {
		rest = strings.TrimLeft(rest, " ")
		j := 0
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j > 0 && j < len(rest) && rest[j] == ':' {
			return lvInfo
		}
		return lvNone
	}
	j := 0
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	if j == 0 || j >= len(t) || t[j] != '/' {
		return lvNone
	}
	r, ok := strings.CutPrefix(strings.TrimLeft(t[j+1:], "0123456789"), " Test ")
	if !ok || !strings.HasPrefix(strings.TrimLeft(r, " "), "#") {
		return lvNone
	}
	d := strings.Index(r, " ...")
	if d < 0 {
		return lvNone
	}
	res := strings.TrimLeft(r[d:], ". ")
	switch {
	case strings.HasPrefix(res, "Passed"):
		return lvInfo
	case strings.HasPrefix(res, "***"), strings.HasPrefix(res, "Not Run"), strings.HasPrefix(res, "Failed"):
		return lvError
	}
	return lvNone
}

// prefixKey reports whether s ends with a level key: level=, lvl=,
// severity=, "level":".
func prefixKey(s string) bool {
	s = strings.TrimRight(s, `"= :`)
	s = strings.ToLower(s)
	return strings.HasSuffix(s, "level") || strings.HasSuffix(s, "lvl") || strings.HasSuffix(s, "severity") || strings.HasSuffix(s, "loglevel")
}

func lastNonSpace(s string) byte {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != ' ' {
			return s[i]
		}
	}
	return 0
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isUpperWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 9; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// Message vocabulary, applied once per template (not per line).
var (
	// The class-name alternative is case-sensitive: "KeyError",
	// "IOException", but not the crate "thiserror" or the package
	// "domexception". FAIL in capitals is the verdict of test runners
	// (go test's "--- FAIL:", jest's " FAIL  src/x.test.ts").
	reErrorWord = regexp.MustCompile(`(?i)\b(error|errors|exception|fatal|panic|panicked|traceback|segmentation fault|segfault|sigsegv|sigabrt|core dumped|abort(ed)?|crash(ed)?|unhandled|failed|failure|fails|killed|out of memory|oom|stack overflow|assertion|uncaught|undefined (references?|symbols?|functions?|methods?|variables?|names?|constants?|index|offset)|is undefined|definitely lost|data race|race detected|unresolved (reference|external)|(declared|imported) and not used)\b|\bundefined: |Error:|Exception:|(?-i:\b[A-Z]\w*(Error|Exception)\b|\bFAIL\b)`)
	reWarnWord  = regexp.MustCompile(`(?i)\b(warn|warnings?|denied|refused|timed out|timeout|cannot|can't|could not|couldn't|unable to|not found|invalid|corrupt(ed)?|overrun|overflow|exhausted|retry(ing)?|unavailable|not available|not responding|unresponsive|unreachable|mismatch(ed)?|deprecated|starvation|rejected|dropped|lost|missing|bad|does not satisfy|unsatisfi(ed|able)|incompatible|exceeded|terminated|stalled|cancell?ed)\b|(?-i:\b[A-Z]\w*Warning\b)`)
	// More of each, kept apart: a regular expression of more than 500
	// instructions runs on Go's slower NFA rather than its backtracker.
	// A process that died, TeX's errors; a resource at its limit or used
	// up (a quota, a disk, file descriptors, a port), a requirement an
	// installed version does not meet (pip's "has requirement pyarrow>=15.0,
	// but you have pyarrow 14.0.2"), a part worn out or running low (a UPS's
	// "battery needs to be replaced"), a part that is down,
	// one that does not work as expected ("Heater extruder not heating at
	// expected rate").
	reErrorWord2 = regexp.MustCompile(`(?i)\b(died|undefined control sequence|emergency stop|runaway argument)\b`)
	reWarnWord2  = regexp.MustCompile(`(?i)\b(limit reached|reached the limit|reached its limit|reached the maximum|reached maximum|is full|are full|table full|queue full|buffer full|is down|are down|went down|goes down|marked (as )?down|not \w+ (?:as|at(?: the)?) expected|over quota|over its quota|over its \w+ quota|over the quota|over your quota|no space left|too many open files|address already in use|but you have|needs to be replaced|need to be replaced|needs replacement|needs replacing|running low|battery is low|disk space is low|free space is low|memory is low)\b`)
	// Negated error counts: "0 errors", "no errors", "errors: 0",
	// "failed=0", and with one word between: "No syntax errors",
	// "0 chart(s) failed".
	reNegated = regexp.MustCompile(`(?i)\b(0|no|zero|without)\s+([\w()-]+\s+)?(errors?|failures?|exceptions?|failed)\b|\b(errors?|failures?|failed|exceptions?)\s*[:=]\s*0\b|\berrors? summary:\s*0( errors?)?\b|\b(definitely|indirectly|possibly) lost:\s*0 bytes`)
	// Command-line options name error handling without reporting an
	// error: -Werror=return-type, --severity error, -D warnings,
	// /warnaserror, -Xlint:-options.
	reOption = regexp.MustCompile(`(^|\s)(--?|/)[A-Za-z][\w:.-]*(=\S*|\s+(error|errors|warnings?)\b)?`)
)

// reMemberCall matches a level word as the member a program calls or
// names: "console.error" (jest's header over a test's console output),
// "logger.warn(msg)" and "self.fail()" quoted from source. A method name
// is lower case and is the last word or is called; "java.lang.Error" and
// "app.error: disk full" are left to the keyword expressions.
var reMemberCall = regexp.MustCompile(`\b[A-Za-z_$][\w$]*\.(error|errors|warn|warning|fatal|fail|failed|failure|exception|panic|critical|err)\s*(\(|$)`)

// reCompoundName matches a lower-case level word joined to a neighbour by
// '-', '_' or '.': a name, not a report: a package ("symfony/error-handler"),
// an object file ("tinyproxyd-errors.o"), a resource ("api_5xx_errors"), an
// icon ("error.svg"). Qualified class names ("java.lang.Error",
// "System.Exception") are capitalised and stay.
var reCompoundName = regexp.MustCompile(`[A-Za-z0-9][-_.](errors?|failures?|fail(ed|s)?|fatal|panic|exceptions?|crash(es)?)\b|\b(errors?|failures?|fail(ed|s)?|fatal|panic|exceptions?|crash(es)?)[-_.][A-Za-z0-9]`)

// codeExcerpt reports whether msg is a line of source code a compiler or
// test runner quotes under its diagnostic, numbered in a margin: rustc's
// and gcc's "41 |     return Err(PoolError::Closed)", jest's
// "> 23 |   expect(x)", Elixir's "211 │     Logger.warn(…)", Semgrep's
// "41┆ logger.error(…)". Its words are the program's, not a report.
func codeExcerpt(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	m = strings.TrimPrefix(m, "> ")
	m = strings.TrimLeft(m, " ")
	i := 0
	for i < len(m) && isDigit(m[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	m = strings.TrimLeft(m[i:], " ")
	return strings.HasPrefix(m, "| ") || m == "|" || strings.HasPrefix(m, "│") || strings.HasPrefix(m, "┆")
}

// keywordLevel classifies a message by its words: error, warn or none.
// An echoed command (see commandEcho) has none: its words are what was
// run, not what happened; a stack frame has none: its words name the
// code that ran ("at Console.error (node:internal/console:12:5)"); and
// so does a test runner's line for a test that started or passed: its
// words are the test's name ("✓ returns error for unknown SKU"); and command-line options are not read as words.
func keywordLevel(msg string) uint8 {
	l := keywordLevelWords(msg)
	if l < lvError && elmHeading(msg) {
		return lvError
	}
	if l < lvWarn && strings.HasPrefix(msg, "[!] ") {
		// CocoaPods' and fastlane's attention marker, on their warnings
		// and on the message they fail with (the colour told them apart)
		return lvWarn
	}
	return l
}

// warningPrefix reports whether msg opens with a warning label, as
// compilers and command-line tools print their warnings: "warning: …",
// "WARNING: …", "Warning: …".
// It returns the rest of the message.
func warningPrefix(msg string) (string, bool) {
	m := strings.TrimLeft(msg, " \t")
	for _, p := range [...]string{"warning: ", "WARNING: ", "Warning: "} {
		if rest, ok := strings.CutPrefix(m, p); ok {
			return rest, true
		}
	}
	return "", false
}

// reFailWord matches the words that only say something failed.
var reFailWord = regexp.MustCompile(`(?i)\b(failed|failure|failures|fails|fail|errors?)\b`)

// elmHeading reports whether msg heads one of the Elm compiler's reports,
// which name the problem in capitals between dashes, with no failure word
// needed: "-- TYPE MISMATCH ------ src/Main.elm", "-- DEBUG REMNANTS ----".
func elmHeading(msg string) bool {
	if !strings.HasPrefix(msg, "-- ") {
		return false
	}
	i := 3
	for i < len(msg) && (msg[i] >= 'A' && msg[i] <= 'Z' || msg[i] == ' ' || msg[i] == '\'') {
		i++
	}
	return i > 5 && msg[i-1] == ' ' && strings.HasPrefix(msg[i:], "---")
}

// keywordLevelWords is keywordLevel without the line markers.
func keywordLevelWords(msg string) uint8 {
	if pytestExplanation(msg) || assertionDetail(msg) || testFailed(msg) {
		return lvError
	}
	if m, ok := warningPrefix(msg); ok && reFailWord.MatchString(m) && keywordLevelWords(reFailWord.ReplaceAllString(m, " ")) < lvError {
		// the program said it only warns, whatever failed: "warning:
		// dSYM upload failed, continuing"; a race or an undefined name
		// under the label ("WARNING: DATA RACE") is still an error
		return lvWarn
	}
	if strings.Contains(msg, "not found") && reCommandNotFound.MatchString(msg) {
		return lvError // the script stops there (exit status 127)
	}
	if l := aptLevel(msg); l != lvNone {
		return l
	}
	if l := severityLevel(msg); l != lvNone {
		return l
	}
	if l := linkerLevel(msg); l != lvNone {
		return l
	}
	if !mayHaveKeyword(msg) || commandEcho(msg) || stackFrame(msg) || testPassed(msg) || codeExcerpt(msg) {
		return lvNone
	}
	if strings.IndexByte(msg, '-') >= 0 || strings.IndexByte(msg, '_') >= 0 || strings.IndexByte(msg, '.') >= 0 {
		msg = reCompoundName.ReplaceAllString(msg, " ")
	}
	if strings.IndexByte(msg, '.') >= 0 {
		msg = reMemberCall.ReplaceAllString(msg, " ")
	}
	if strings.IndexByte(msg, '-') >= 0 || strings.IndexByte(msg, '/') >= 0 {
		msg = reOption.ReplaceAllString(msg, " ")
	}
	if strings.IndexByte(msg, '/') >= 0 || strings.IndexByte(msg, '\\') >= 0 {
		msg = stripPaths(msg)
	}
	if errorWord(msg) {
		if !reNegated.MatchString(msg) {
			return lvError
		}
		msg = reNegated.ReplaceAllString(msg, "")
		if errorWord(msg) {
			return lvError
		}
	}
	if (reWarnWord.MatchString(msg) || reWarnWord2.MatchString(msg)) && !cmakeStatus(msg) {
		return lvWarn
	}
	return lvNone
}

// reCommandNotFound reads a shell's report of a missing command: dash's
// "sh: 1: tsc: not found", bash's "bash: line 3: jq: command not found",
// zsh's "zsh: command not found: jq".
var reCommandNotFound = regexp.MustCompile(`\b(?:sh|bash|dash|zsh|ash|ksh)(?:: line \d+)?: (?:\d+: )?[^\s:]+: (?:command )?not found\b|\bcommand not found: \S`)

func errorWord(msg string) bool { return reErrorWord.MatchString(msg) || reErrorWord2.MatchString(msg) }

// announcer reports whether an error message introduces the error
// printed on the next line: a short line ending in ':' or '[' ("error
// during build:", "The error(s) are [", "Could not resolve dependency:").
// Tools print the message itself without a failure word ("src/a.tsx
// (3:9): \"x\" is not exported by …").
func announcer(msg string) bool {
	m := strings.TrimRight(msg, " \t")
	if m == "" || m[len(m)-1] != ':' && m[len(m)-1] != '[' {
		return false
	}
	if strings.EqualFold(m, "error:") {
		return true // the Serverless Framework's "Error:", its message below
	}
	// It names a failure itself ("from a.cc:3:" and "In file included
	// from" do not) and more than a verdict ("Failed tests:" lists names).
	return len(strings.Fields(m)) <= maxAnnouncerWords && keywordLevel(m) >= lvWarn && !verdictOnly(m)
}

// maxAnnouncerWords is the most words an announcing line has.
const maxAnnouncerWords = 8

// treeLine reports whether msg is a line of a tree listing (a dependency
// tree from Maven, Gradle, npm ls or cargo tree): after the bars of the
// levels above, a branch ("+- ", "\\- ", "├── ", "└── ", "`-- ", "|-- ").
// Its words name a node, not a failure, whatever the line's level.
func treeLine(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	if strings.HasPrefix(m, "|-") {
		return true
	}
	m = strings.TrimLeft(m, " \t|│")
	for _, p := range [...]string{"+-", "\\-", "├", "└", "`-"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// wordless reports whether msg has no letter or digit: a bracket or a
// rule closing a block ("]", "-----"), nothing to quote.
func wordless(msg string) bool {
	for i := 0; i < len(msg); i++ {
		if isAlpha(msg[i]) || isDigit(msg[i]) || msg[i] >= 0x80 {
			return false
		}
	}
	return true
}

// cmakeStatus reports whether msg is one of CMake's status messages, which
// report what a configure step found: "-- Could NOT find Doxygen (missing:
// DOXYGEN_EXECUTABLE)" and "-- Looking for kqueue - not found" are the
// answers to optional checks, not warnings; an error word still counts
// ("-- Configuring incomplete, errors occurred!").
func cmakeStatus(msg string) bool {
	return strings.HasPrefix(strings.TrimLeft(msg, " "), "-- ")
}

// keywordStems are lower-case fragments of every word the keyword
// expressions match; a message with none of them skips the expressions.
var keywordStems = []string{"err", "xcept", "fatal", "panic", "trace", "segf", "sigs", "sigab", "core", "abort", "crash", "unhandl", "fail",
	"kill", "memory", "oom", "race", "overflow", "assert", "uncaught", "warn", "denied", "refused", "time", "cannot", "can't", "could", "unable",
	"not ", "undefined", "unresolved ", "invalid", "exceed", "terminat", "stall", "cancel", "unsatisf", "incompat", "corrupt", "overrun", "exhaust", "retry", "unavailable", "deprecat", "starv", "reject", "drop", "lost", "missing", "bad",
	"unrespons", "unreach", "mismatch", "limit", "reached", "full", "down", "emergency", "runaway", "died", "quota", "no space", "too many", "already in", "but you", "replac", "low"}

// stemsByFirst lists the keyword stems by their first byte.
var stemsByFirst = func() (t [256][]string) {
	for _, k := range keywordStems {
		t[k[0]] = append(t[k[0]], k)
	}
	return t
}()

// mayHaveKeyword reports whether the first 512 bytes of msg contain a
// keyword stem, ignoring ASCII case; one pass over msg.
func mayHaveKeyword(msg string) bool {
	if len(msg) > 512 {
		msg = msg[:512]
	}
	for i := 0; i < len(msg); i++ {
		for _, k := range stemsByFirst[lowerASCII(msg[i])] {
			if hasPrefixLower(msg[i:], k) {
				return true
			}
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixLower reports whether s starts with the lower-case stem k,
// ignoring the ASCII case of s.
func hasPrefixLower(s, k string) bool {
	if len(s) < len(k) {
		return false
	}
	for j := 1; j < len(k); j++ {
		if lowerASCII(s[j]) != k[j] {
			return false
		}
	}
	return true
}

// commandEcho reports whether msg is a command as CI runners and shells
// echo it before running it: "+ make" (set -x), "$ npm test" (GitLab,
// Travis), "##[group]Run go test" and "[command]/usr/bin/git" (GitHub
// Actions), "> tsc -p ." (npm scripts), "[Pipeline] sh" (Jenkins).
func commandEcho(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	for _, p := range [...]string{"+ ", "++ ", "$ ", "> ", "##[group]Run ", "[command]", "[Pipeline] "} {
		if echoedWith(m, p) {
			return true
		}
	}
	return false
}

// echoedWith reports whether msg starts with the echo prefix p. After
// "> " npm echoes a script ("> tsc -p .") and Jenkins a git command
// ("> git fetch --tags"), but Gradle nests the causes of a failure (see
// gradleCause).
func echoedWith(msg, p string) bool {
	return strings.HasPrefix(msg, p) && (p != "> " || !gradleCause(msg))
}

// gradleCause reports whether msg is one of the causes Gradle nests under
// a failure, each one "> " deeper: a sentence ("> Could not resolve all
// files for configuration", "> There was a failure while executing work
// items") or an exception ("> java.lang.IllegalStateException: …"); a
// command starts in lower case.
func gradleCause(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	if !strings.HasPrefix(m, "> ") || len(m) < 3 {
		return false
	}
	return m[2] >= 'A' && m[2] <= 'Z' || exceptionLine(m[2:])
}

// A stack frame as runtimes print them; stackFrame states the shapes.
var (
	// the location at the end of a JS, Java or Rust frame: "(a.js:60:7)",
	// "(Foo.java:12)", "(Native Method)", "/app/a.js:60:7", "src/x.rs:9:5"
	reFrameLoc = regexp.MustCompile(`(\((.*:\d+(:\d+)?|Native Method|Unknown Source|native|<anonymous>)\)|^[^ ()]+:\d+(:\d+)?)$`)
	// Go: "/src/app/main.go:42 +0x1d", "panic({0x8a1c40?, 0xa3f2b0?})",
	// "main.(*T).run(0xc000010000, ...)"; Rust backtraces: "3: core::panicking::panic"
	reFrameLine = regexp.MustCompile(`^([^ ]+\.go:\d+( \+0x[0-9a-f]+)?|\d+: [^ ]*::[^ ]+|[\w./*()-]+\(((0x[0-9a-f]+|\{[^}]*\}|\.\.\.)\??(, )?)*\))$`)
)

// stackFrame reports whether msg is one frame of a stack trace: JS, Java,
// Kotlin and Rust "at NAME (LOCATION)" or "at LOCATION", .NET "at NAME in
// FILE:line N", Python `File "x.py", line N, in NAME`, Go's file lines
// and Rust's numbered backtrace lines.
// indentedFrame reports, cheaply, whether s is an indented Java or .NET
// stack frame ("\tat a.b.C.d(C.java:41)") or the count of frames left out
// ("\t... 12 more"): lines with no level word in them.
func indentedFrame(s string) bool {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == 0 || i == len(s) {
		return false
	}
	m := s[i:]
	return strings.HasPrefix(m, "at ") && m[len(m)-1] == ')' && strings.IndexByte(m, '(') > 0 ||
		strings.HasPrefix(m, "... ") && strings.HasSuffix(m, " more")
}

func stackFrame(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	switch {
	case strings.HasPrefix(m, "at "):
		// "at f (a.js:1:2)", "at new Foo (a.js:1:2)", "at async f (a.js:1:2)",
		// "at a.B.c(B.java:9)", "at /app/a.js:1:2", "at N.C.M() in C.cs:line 9"
		rest := m[3:]
		if strings.Contains(rest, ":line ") {
			return true
		}
		loc := reFrameLoc.FindStringIndex(rest)
		return loc != nil && strings.Count(rest[:loc[0]], " ") <= 3
	case strings.HasPrefix(m, `File "`):
		return strings.Contains(m, `", line `)
	}
	return reFrameLine.MatchString(m)
}

// testPassed reports whether msg is a test runner's line for a test that
// started or passed: go test's "=== RUN" and "--- PASS:", mocha's and
// jest's check marks, jest's "PASS", GoogleTest's "[ RUN      ]" and
// "[       OK ]", pytest's "... PASSED", unittest's "... ok", dotnet
// test's "Passed Name [4 ms]" (and "Skipped"), Robot Framework's
// "Name   | PASS |" (and "| SKIP |"), Gatling's assertion that held
// ("checkout: percentage of failed events … 1.0 : true (actual : 0.31)").
func testPassed(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	for _, p := range [...]string{"✓", "✔", "√", "--- PASS", "=== RUN", "=== PAUSE", "=== CONT", "PASS ", "ok  ", "[ RUN  ", "[       OK ]", "[  PASSED  ]", "[+] "} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	m = strings.TrimRight(m, " \t")
	if st := robotStatus(m); st == "PASS" || st == "SKIP" || strings.Contains(m, " : true (actual : ") {
		return true // (and Gatling's assertion that held)
	}
	return strings.HasSuffix(m, " PASSED") || strings.HasSuffix(m, " ... ok") || vstestResult(m) || tapOK(m)
}

// robotStatus returns the status of a Robot Framework console line for a
// test or suite, "Name   | PASS |", or "".
func robotStatus(m string) string {
	rest, ok := strings.CutSuffix(m, " |")
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, " | ")
	if i <= 0 {
		return ""
	}
	switch st := rest[i+3:]; st {
	case "PASS", "FAIL", "SKIP", "NOT RUN":
		return st
	}
	return ""
}

// tapOK reports whether m is TAP's line for a test that passed:
// "ok 7 - failed realloc leaves buffer untouched".
func tapOK(m string) bool {
	rest, ok := strings.CutPrefix(m, "ok ")
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && isDigit(rest[i]) {
		i++
	}
	return i > 0 && (i == len(rest) || rest[i] == ' ')
}

// vstestResult reports whether m is dotnet test's line for a test that
// passed or was skipped: "Passed Ledger.Tests.Parse_ReturnsError [1 ms]".
func vstestResult(m string) bool {
	rest, ok := strings.CutPrefix(m, "Passed ")
	if !ok {
		rest, ok = strings.CutPrefix(m, "Skipped ")
	}
	if !ok || !strings.HasSuffix(rest, "]") {
		return false
	}
	name, dur, ok := strings.Cut(rest, " [")
	return ok && name != "" && !strings.ContainsAny(name, " \t") && strings.HasSuffix(dur, "s]")
}

// runnerFailure reports whether msg is a test runner's own report of a
// failure: sbt prints ScalaTest's "- adds tax *** FAILED ***" and its
// "17.99 did not equal 18.00" under an [info] tag, and such a report
// outranks the tag.
func runnerFailure(msg string) bool {
	return testFailed(msg) || assertionDetail(msg)
}

// testFailed reports whether msg is a test runner's mark of a test that
// failed, whatever its name says: jest's "✕", mocha's and ava's "✗",
// "✘", "✖", "×" before the test's title, TAP's "not ok 3 - adds",
// ScalaTest's "- adds tax *** FAILED ***", cargo-nextest's final status
// of a test, "TIMEOUT [  60.004s] crate tests::name" (FAIL, TIMEOUT,
// SIGSEGV …; a "TRY 1 FAIL" is a try it will repeat), Robot Framework's
// "Name   | FAIL |". A mark before a count ("✖ 19 problems (1 error, 18
// warnings)") is a tally.
func testFailed(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	if strings.HasPrefix(m, "not ok ") || strings.HasSuffix(strings.TrimRight(m, " "), "*** FAILED ***") {
		return true
	}
	if robotStatus(strings.TrimRight(m, " \t")) == "FAIL" {
		return true
	}
	if len(m) > 0 && m[0] >= 'A' && m[0] <= 'Z' && reNextestFail.MatchString(m) {
		return true
	}
	for _, p := range [...]string{"✕ ", "✗ ", "✘ ", "✖ ", "× ", "[-] "} {
		if strings.HasPrefix(m, p) {
			rest := strings.TrimLeft(m[len(p):], " ")
			return rest != "" && !isDigit(rest[0])
		}
	}
	return false
}

var reNextestFail = regexp.MustCompile(`^(FAIL|TIMEOUT|ABORT|SIG[A-Z]+) +\[ *[\d.]+s\] +\S`)

// aptLevel reads apt's and dpkg's one-letter levels: "E: Unable to
// locate package libfoo", "W: GPG error: …", "N: Skipping acquire …".
func aptLevel(msg string) uint8 {
	if len(msg) < 4 || msg[1] != ':' || msg[2] != ' ' {
		return lvNone
	}
	switch msg[0] {
	case 'E':
		return lvError
	case 'W':
		return lvWarn
	}
	return lvNone
}

// severityLevel reads a security audit's severity label (npm audit's
// "Severity: high", Trivy's and others' "Severity: CRITICAL"): critical
// and high findings fail audits, moderate and medium ones warn.
func severityLevel(msg string) uint8 {
	m := strings.TrimLeft(msg, " \t")
	rest, ok := strings.CutPrefix(m, "Severity: ")
	if !ok {
		return lvNone
	}
	switch strings.ToLower(strings.TrimSpace(rest)) {
	case "critical", "high":
		return lvError
	case "moderate", "medium":
		return lvWarn
	}
	return lvNone
}

// linkerLevel reads the linker's messages, which need no failure word to
// be errors: "…/bin/ld: region `iram0_0_seg' overflowed by 1184 bytes",
// "ld.lld: duplicate symbol: init", "ld: library not found for -lssl"; a
// warning says so ("ld: warning: …"). The linker is named before the
// first ": ", by its path or a cross toolchain's prefix
// ("arm-none-eabi-ld").
func linkerLevel(msg string) uint8 {
	m := strings.TrimLeft(msg, " \t")
	i := strings.Index(m, ": ")
	if i <= 0 || i > 200 {
		return lvNone
	}
	prog := m[:i]
	if j := strings.LastIndexAny(prog, `/\`); j >= 0 {
		prog = prog[j+1:]
	}
	prog = strings.TrimSuffix(prog, ".exe")
	switch {
	case prog == "ld" || prog == "lld" || prog == "mold" || prog == "lld-link" || strings.HasPrefix(prog, "ld.") || strings.HasPrefix(prog, "ld64"),
		strings.HasSuffix(prog, "-ld") && !strings.ContainsAny(prog, " :"):
	default:
		return lvNone
	}
	rest := strings.ToLower(strings.TrimLeft(m[i+2:], " "))
	switch {
	case strings.HasPrefix(rest, "warning"):
		return lvWarn
	case strings.HasPrefix(rest, "note:") || strings.HasPrefix(rest, "info:"):
		return lvNone
	}
	return lvError
}

// assertionDetail reports whether msg is a line of a test assertion's
// report of what it expected and what it got, which test runners print
// only when an assertion fails: jest's and vitest's matcher line
// "expect(received).toBe(expected)"; a value under a one-word label,
// "Expected: 90", "Received: 100", "Actual:   4", rspec's "got: 99.0",
// JUnit's "expected: <3> but was: <2>", NUnit's "But was:  2", or under
// jest's typed labels ("Received array:"); googletest's "Expected
// equality of these values:" and "Which is: 4". A label of any other
// words ("Received message: hello") is an application's, not a runner's.
func assertionDetail(msg string) bool {
	m := strings.TrimLeft(msg, " \t")
	if strings.HasPrefix(m, "expect(") {
		return strings.Contains(m, ").")
	}
	if strings.HasPrefix(m, "Expected equality of") {
		return true
	}
	if strings.Contains(m, " did not equal ") {
		return true // ScalaTest: "17.99 did not equal 18.00 (Spec.scala:41)"
	}
	if strings.HasPrefix(m, "Expected ") && strings.Contains(m, " but got ") {
		return true // Pester, Chai and others: "Expected 30, but got 90."
	}
	if i := strings.Index(m, " should have been "); i > 0 && strings.Contains(m[i:], " but it was ") {
		return true // Robot Framework's libraries: "… should have been '54.90' but it was '59.90'."
	}
	if strings.Contains(m, " : false (actual : ") {
		return true // Gatling's assertions: "Global: 95th percentile … 800.0 : false (actual : 1137.0)"
	}
	if i := strings.Index(m, "but was:"); i > 0 && strings.Contains(m[:i], "expected") {
		// JUnit and Hamcrest anywhere in a line: surefire's summary
		// "  CalcTest.testAdd:42 expected:<3> but was:<2>".
		return true
	}
	colon := strings.IndexByte(m, ':')
	if colon <= 0 || colon > 24 {
		return false
	}
	label := strings.Fields(m[:colon])
	switch {
	case len(label) == 1:
		switch label[0] {
		case "Expected", "expected", "Received", "Actual", "actual", "got":
			return true
		}
	case len(label) == 2:
		switch label[0] + " " + label[1] {
		case "But was", "but was", "Which is":
			return true
		}
		if label[0] == "Expected" || label[0] == "Received" {
			switch label[1] {
			case "value", "string", "array", "length", "object", "substring", "pattern", "type", "constructor", "path":
				return true
			}
		}
	}
	return false
}

// pytestExplanation reports whether msg is a line of pytest's failure
// explanation, which pytest marks with an E in the first column and
// spaces: "E       assert 404 == 200".
func pytestExplanation(msg string) bool {
	return len(msg) > 3 && msg[0] == 'E' && msg[1] == ' ' && msg[2] == ' ' && msg[3] == ' '
}

// stripPaths blanks the file paths of msg, so that a file or directory
// named after errors ("src/api/errors.cpp:18:6:", "/src/Errors/Mapper.cs")
// is not read as one. A path is a token that starts with '/', './', '~/'
// or a drive letter, or that holds a '/' or '\' with a '.' after the
// last one; "Failure/Error:" is not one.
func stripPaths(msg string) string {
	var b strings.Builder
	changed := false
	start := 0
	for i := 0; i <= len(msg); i++ {
		if i < len(msg) && msg[i] != ' ' && msg[i] != '\t' {
			continue
		}
		tok := msg[start:i]
		if isPath(tok) {
			if !changed {
				b.Grow(len(msg))
				b.WriteString(msg[:start])
				changed = true
			}
			b.WriteByte(' ')
		} else if changed {
			b.WriteString(tok)
		}
		if changed && i < len(msg) {
			b.WriteByte(msg[i])
		}
		start = i + 1
	}
	if !changed {
		return msg
	}
	return b.String()
}

func isPath(tok string) bool {
	tok = strings.TrimLeft(tok, "'\"`([<")
	sep := strings.LastIndexAny(tok, "/\\")
	if sep < 0 {
		return false
	}
	if tok[0] == '/' || tok[0] == '~' || strings.HasPrefix(tok, "./") || strings.HasPrefix(tok, "../") ||
		len(tok) > 2 && tok[1] == ':' && (tok[2] == '\\' || tok[2] == '/') {
		return true
	}
	return strings.IndexByte(tok[sep:], '.') > 0
}
