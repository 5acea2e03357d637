package logscan

import (
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// rec is one physical line after header parsing and event grouping.
type rec struct {
	text  string // the line (ANSI escapes removed)
	msg   string // the message part, after the header
	time  string // timestamp as written, "" when none
	ms    int64  // timestamp in Unix ms (or ms since start), 0 when none
	level uint8  // header level, or the fallback detector's
	cont  bool   // continues the previous line's event
	blank bool
	key   uint8 // key-line priority inside an event (keyWarn … keyCause)
	// sk is 1 + the index of the message's skeleton in its block's sketch,
	// computed by the parser so the consumer only looks it up; 0: none.
	sk int32
}

// Key-line priorities: a later "Caused by" replaces an earlier one; the
// first root exception and the first exception line are kept.
const (
	keyNone  uint8 = iota
	keyWarn        // a warning line inside an event whose head has no level
	keyExc         // an exception line or an error line inside an event
	keyRoot        // the exception a Python traceback or Rust panic ends with
	keyCause       // Caused by:, .NET inner exception --->
)

// Stack modes of the event grouper.
const (
	modeNone uint8 = iota
	modeJava
	modePython
	modePythonEnd // a Python traceback's exception line was seen
	modeGo
	modeRust
	modeKernel // after a Linux kernel's "Call Trace:" (see kernelTrace)
	// modePending: modeJava or modeNone, as exceptionLine(pendMsg) says,
	// worked out only when a line needs it (see resolveMode): most events
	// are one line, and their next line has a timestamp and is no frame
	modePending
)

// grouper assigns header fields and event boundaries, line by line. It
// keeps the state of the current multi-line event; use one per file.
type grouper struct {
	f        *miner.Format // safe for concurrent use
	mp       *miner.Parser // f's parser for this grouper's goroutine; nil: f.Parse
	headered bool          // most lines of the file carry a header
	// noCR: the lines being parsed hold no '\r' (parseBlock checks a
	// block at once), so visible need not look for one in each line
	noCR bool
	// noESC: nor any ESC, so no line has an ANSI escape to strip
	noESC bool
	groupState
	pendMsg string // the head's message while mode is modePending
}

// groupState is the grouper's memory of the current event. A line with a
// timestamp always starts an event and sets all of it, so the state after
// such a line does not depend on the lines before it.
type groupState struct {
	mode    uint8 // stack mode of the current event
	evLevel uint8 // level of the current event's head
	inEvent bool
	rustMsg bool // the next line is a Rust panic's message
	// pyIndent: an indented Python traceback is open in the event (its
	// exception line is the event's root)
	pyIndent bool
	// locHead: the current event's head is a source location or a
	// category alone, its message on the next, indented line (see
	// locationOnly)
	locHead bool
}

// headerSample is how many lines the header detector learns from.
const headerSample = 2000

func newGrouper(sample []string) *grouper {
	clean := make([]string, 0, len(sample))
	for _, s := range sample {
		clean = append(clean, visible(s))
	}
	g := &grouper{f: miner.Learn(clean)}
	withHeader := 0
	nonBlank := 0
	for _, s := range clean {
		if strings.TrimSpace(s) == "" {
			continue
		}
		nonBlank++
		h := g.f.Parse(s)
		if h.Time != "" || h.Level != "" {
			withHeader++
			continue
		}
		if _, ms := fallbackTime(s); ms != 0 || detectLevel(s) != lvNone {
			withHeader++
		}
	}
	g.headered = nonBlank > 0 && withHeader*2 >= nonBlank
	return g
}

// line parses one line and decides whether it continues the current event.
func (g *grouper) line(text string) rec {
	r := g.parse(text)
	g.group(&r)
	return r
}

// parse splits one line into its header fields. It reads only the learned
// format, so several goroutines may parse lines of one file at once.
func (g *grouper) parse(text string) rec {
	var r rec
	g.parseInto(&r, text)
	return r
}

// parseInto is parse writing into *r, which must be zero.
func (g *grouper) parseInto(r *rec, text string) {
	if g.noCR {
		if !g.noESC {
			text = stripANSI(text)
		}
	} else {
		text = visible(text)
	}
	r.text = text
	if isBlank(text) {
		r.blank = true
		return
	}
	var h miner.Header
	if g.mp != nil {
		g.mp.ParseTo(text, &h)
	} else {
		h = g.f.Parse(text)
	}
	r.time, r.ms = h.Time, h.UnixMS
	if r.time == "" {
		r.time, r.ms = fallbackTime(text)
	}
	r.level = levelOf(h.Level)
	if r.level == lvNone {
		r.level = detectLevel(text)
	}
	ms := h.MsgStart
	if ms < 0 || ms > len(text) {
		ms = 0
	}
	r.msg = text[ms:]
}

// startsEvent reports whether a parsed line starts an event whatever the
// lines before it were (it has a timestamp and cannot be a stack trace's
// next line, see tracePart), which resets all of the grouper's state.
func (r *rec) startsEvent() bool {
	return !r.blank && r.time != "" && !tracePart(r.msg) && !r.kernelTrace()
}

// kernelTrace reports whether r is a line of a Linux kernel call trace
// (after "Call Trace:"), each of which the kernel prints with its own
// header: a frame indented
// after it ("[814303.421549]  filemap_get_pages+0x5f6/0x640", "kernel:
// ? xfs_iunlock+0x50/0x50 [xfs]", or behind the uptime in a syslog line),
// a marker ("<TASK>", "</IRQ>"), the registers and the code bytes.
func (r *rec) kernelTrace() bool { return kernelTraceLine(r.msg) }

// kernelTraceLine is kernelTrace's test of the message.
//
//go:noinline
func kernelTraceLine(m string) bool {
	if m != "" && m[0] == '[' {
		// "[12345.678901]  func+0x1/0x2": the uptime, in a syslog line
		e := strings.Index(m, "] ")
		if e < 0 || e > 16 || strings.Trim(m[1:e], " .0123456789") != "" {
			return false
		}
		m = strings.TrimLeft(m[e+1:], " ")
	}
	if len(m) < 5 || len(m) > 200 {
		return false
	}
	if m[3] == ':' && m[4] == ' ' {
		return registerLine(m)
	}
	if strings.HasPrefix(m, "Code: ") {
		return true
	}
	if m[0] == '<' {
		switch m {
		case "<TASK>", "</TASK>", "<IRQ>", "</IRQ>", "<NMI>", "</NMI>", "<SOFTIRQ>", "</SOFTIRQ>":
			return true
		}
		return false
	}
	m = strings.TrimPrefix(m, "? ")
	tok, mod, _ := strings.Cut(m, " ")
	if mod != "" && (len(mod) < 3 || mod[0] != '[' || mod[len(mod)-1] != ']' || strings.IndexByte(mod, ' ') >= 0) {
		return false // "func+0x1/0x2 [module]" or nothing after the frame
	}
	name, off, ok := strings.Cut(tok, "+0x")
	if !ok || name == "" {
		return false
	}
	a, b, ok := strings.Cut(off, "/0x")
	if !ok || !hexDigits(a) || !hexDigits(b) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c == '_' || c == '.' || isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}

// registerLine reports whether m is a line of the registers a kernel trace
// dumps: "RIP: 0033:0x7fa35558a960", "RAX: ffffffffffffffda RBX: 0000…",
// "RSP: 002b:00007ffd0c6fe408 EFLAGS: 00000246 ORIG_RAX: 0000000000000011".
func registerLine(m string) bool {
	f := strings.Fields(m)
	if len(f)%2 != 0 {
		return false
	}
	switch f[0] {
	case "RIP:", "RSP:", "RAX:", "RBX:", "RCX:", "RDX:", "RSI:", "RDI:", "RBP:", "R08:", "R09:", "R10:", "R11:", "R12:", "R13:", "R14:", "R15:", "CR2:":
	default:
		return false
	}
	if f[0] == "RIP:" {
		return true // the code address, as "0010:func+0x5d/0xe0" too
	}
	for i := 0; i < len(f); i += 2 {
		name, val := f[i], f[i+1]
		if len(name) < 3 || name[len(name)-1] != ':' || strings.Trim(name[:len(name)-1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" ||
			!hexDigits(strings.ReplaceAll(val, ":", "")) {
			return false
		}
	}
	return true
}

// hexDigits reports whether s is one or more lower-case hex digits.
func hexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// tracePart reports whether a message with a timestamp of its own may be
// a line of the stack trace the event before it started: logcat,
// journald and syslog give every line a header, so an exception's frames
// ("at com.acme.Foo.bar(Foo.kt:12)") and its causes ("Caused by: …",
// "... 12 more") come each with the header.
func tracePart(msg string) bool {
	switch byteAt(msg) {
	case 'a':
		return strings.HasPrefix(msg, "at ") && stackFrame(msg)
	case 'C':
		return strings.HasPrefix(msg, "Caused by: ")
	case '.':
		return strings.HasPrefix(msg, "... ") && strings.HasSuffix(msg, " more")
	}
	return false
}

// group decides whether a parsed line continues the current event, sets
// r.cont and r.key, and updates the grouper's state.
func (g *grouper) group(r *rec) {
	r.cont, r.key = false, keyNone
	loc := g.locHead
	g.locHead = false
	if r.blank {
		if g.inEvent && (g.mode == modeGo || g.mode == modePython || g.mode == modePythonEnd) {
			r.cont = true
		} else {
			g.inEvent = false
		}
		return
	}
	if g.inEvent && r.time == "" {
		g.resolveMode()
		if loc && r.text != "" && (r.text[0] == ' ' || r.text[0] == '\t') {
			// the message of a head that only said where it came from
			g.startEvent(r)
			return
		}
		if g.continues(r) || g.f.Marked() {
			// (where every record starts with a mark, a line without it
			// is the record's next line: WebLogic's multi-line messages)
			r.cont = true
			return
		}
	} else if g.inEvent && g.mode == modeKernel && r.kernelTrace() {
		r.cont = true
		return
	} else if g.inEvent && (g.mode == modeJava || g.mode == modePending) && tracePart(r.msg) && g.resolveMode() == modeJava {
		// a trace printed a line at a time, each with its header
		if strings.HasPrefix(r.msg, "Caused by: ") {
			r.key = keyCause
		}
		r.cont = true
		return
	}
	g.startEvent(r)
	m := r.msg
	g.locHead = len(m) >= 4 && (m[len(m)-1] == ')' || m[len(m)-1] == ']') && locationOnly(m)
}

// fieldName reports whether an indented line only names a field whose
// value follows on the lines below (Julia's "│   exception ="): its words
// are no error, whatever they are.
func fieldName(trim string) bool { return strings.HasSuffix(strings.TrimRight(trim, " "), " =") }

// boxLine reports whether t goes on a message drawn in a box, as Julia's
// logging prints one: "┌ Error: …", then "│   exception = …" and
// "└ @ Module file.jl:12"; Terraform's "╷", "│ Error: …", "╵".
func boxLine(t string) bool {
	return strings.HasPrefix(t, "│") || strings.HasPrefix(t, "└") || strings.HasPrefix(t, "╵")
}

// isBlank reports whether s is empty or white space only.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\v', '\f', '\r':
		default:
			if s[i] < 0x80 {
				return false
			}
			return strings.TrimSpace(s[i:]) == ""
		}
	}
	return true
}

// continues applies the continuation rules to a line with no timestamp.
func (g *grouper) continues(r *rec) bool {
	t := r.text
	c0 := t[0]
	if c0 == ' ' && antTask(t) {
		return false
	}
	trim := strings.TrimLeft(t, " \t")
	switch {
	case strings.HasPrefix(trim, "Caused by:") || innerException(trim):
		r.key = keyCause
		return true
	case g.rustMsg:
		g.rustMsg = false
		r.key = keyRoot
		return true
	case c0 == ' ' || c0 == '\t' || c0 == '|' || c0 == 0xe2 && boxLine(t):
		if gradleCause(trim) && keywordLevel(t) >= lvWarn {
			// Gradle nests the causes of a failure one "> " deeper
			// each: like "Caused by:", the last is the most specific.
			r.key = keyCause
			return true
		}
		switch {
		case r.level >= lvError && g.mode != modePython && !fieldName(trim):
			r.key = keyExc
		case r.level == lvWarn && g.mode != modePython:
			r.key = keyWarn // a warning under the head, not an error
		case r.level == lvNone && g.mode != modePython && strings.HasPrefix(trim, "Traceback (most recent call last)"):
			g.pyIndent = true
		case r.level == lvNone && g.mode != modePython && errorException(trim):
			// a program's exception in another's report, indented:
			// Nextflow's "Command error:" block ending a traceback with
			// "  AttributeError: 'DataFrame' object has no attribute …"
			r.key = keyExc
			if g.pyIndent {
				r.key, g.pyIndent = keyRoot, false
			}
		case r.level == lvNone && g.mode == modeNone && g.evLevel < lvWarn:
			// An indented error under a plain head: a linter's
			// "  48:5  error  ..." under the file name, kubectl's
			// "  Warning  Failed ..." under "Events:", rspec's
			// "Failure/Error:" under the example. Under a head with no
			// level at all an indented warning is its key too, until an
			// error comes: a package manager's "  - x requires php ^7.2
			// -> your PHP version does not satisfy that requirement."
			// under "Problem 1".
			switch kw := keywordLevel(t); {
			case kw >= lvError && !fieldName(trim):
				r.key = keyExc
			case kw == lvWarn && g.evLevel == lvNone:
				r.key = keyWarn
			}
		}
		return true
	case strings.HasPrefix(t, "... ") && (strings.HasSuffix(t, " more") || strings.HasSuffix(t, "omitted")):
		return true
	}
	switch g.mode {
	case modePython, modePythonEnd:
		if strings.HasPrefix(t, "During handling of") || strings.HasPrefix(t, "The above exception") || strings.HasPrefix(t, "Traceback (most recent call last)") {
			g.mode = modePython
			return true
		}
		if g.mode == modePythonEnd {
			// The exception line ended the traceback: what follows
			// unindented is the program's next output, unless a chained
			// traceback goes on.
			return false
		}
		r.key = keyRoot
		g.mode = modePythonEnd
		return true
	case modeGo:
		if strings.HasPrefix(t, "goroutine ") || strings.HasPrefix(t, "[signal ") || strings.HasPrefix(t, "created by ") ||
			strings.HasPrefix(t, "exit status ") || goFrame(t) {
			return true
		}
	case modeRust:
		if strings.HasPrefix(t, "note: ") || strings.HasPrefix(t, "stack backtrace:") {
			return true
		}
	}
	if r.level != lvNone && g.headered {
		return false
	}
	if g.evLevel >= lvWarn && r.level == lvNone {
		// logging.exception and friends: an error line, then its trace.
		switch {
		case pythonStack(t):
			g.mode = modePython
			return true
		case strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "fatal error: "):
			g.mode = modeGo
			r.key = keyRoot
			return true
		}
	}
	if g.headered && (g.evLevel >= lvWarn || g.mode == modeJava) && exceptionLine(t) {
		if g.mode == modeNone {
			g.mode = modeJava
		}
		r.key = keyExc
		return true
	}
	return false
}

// antTask reports whether t is an Ant (or NAnt) task's line, its name
// right-aligned in brackets to the twelfth column: "    [junit] Tests
// run: 31", "     [copy] Copying 14 files". Each is a message of its own,
// not a continuation of the target's "test:" above it.
func antTask(t string) bool {
	i := 0
	for i < len(t) && t[i] == ' ' {
		i++
	}
	if i >= 10 || i+1 >= len(t) || t[i] != '[' {
		return false
	}
	j := i + 1
	for j < len(t) && (t[j] >= 'a' && t[j] <= 'z' || t[j] >= '0' && t[j] <= '9' || t[j] == '-' || t[j] == ':' || t[j] == '.') {
		j++
	}
	return j == 10 && j < len(t) && j > i+1 && t[j] == ']' && (j+1 == len(t) || t[j+1] == ' ')
}

// pythonStack reports whether t opens a Python stack listing: a
// traceback, or a program's dump of where a thread is ("Loop thread
// traceback (most recent call last):" under discord.py's warning that its
// event loop is blocked, faulthandler's "Current thread 0x7f… (most recent
// call first):").
func pythonStack(t string) bool {
	if strings.HasPrefix(t, "Traceback (most recent call last)") {
		return true
	}
	t = strings.TrimRight(t, " \t")
	return strings.HasSuffix(t, "(most recent call last):") || strings.HasSuffix(t, "(most recent call first):")
}

// locationOnly reports whether a head's message is only where it came
// from, its text on the next line: Samba's
// "../../source3/auth/auth.c:344(auth_check_ntlm_password)", .NET's
// console "Microsoft.Hosting.Lifetime[14]". Out of line: group calls it
// only for a head that ends in ')' or ']'.
//
//go:noinline
func locationOnly(m string) bool {
	n := len(m)
	if n < 4 || m[n-1] != ')' && m[n-1] != ']' || n > 200 {
		return false
	}
	if strings.IndexByte(m, ' ') >= 0 || strings.IndexByte(m, '\t') >= 0 {
		return false
	}
	if m[n-1] == ']' {
		// "Category[14]": an event id after a name
		open := strings.LastIndexByte(m, '[')
		return open > 0 && open < n-2 && isAlnumByte(m[open-1]) && allDigits(m[open+1:n-1])
	}
	// "file.c:344(fn)": a source line before the function (a Go frame,
	// "pkg.fn(0x1?)", has no line number there)
	open := strings.LastIndexByte(m, '(')
	d := open
	for d > 0 && isDigit(m[d-1]) {
		d--
	}
	return d < open && d > 0 && m[d-1] == ':'
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// startEvent makes r the head of a new event and sets the stack mode.
func (g *grouper) startEvent(r *rec) {
	g.inEvent = true
	g.evLevel = r.level
	g.mode = modeNone
	g.rustMsg, g.pyIndent = false, false
	m := r.msg
	// Most heads start with none of the stack openers' first letters.
	if !stackOpener[byteAt(m)] && !stackOpener[byteAt(r.text)] {
		if r.level >= lvWarn {
			g.mode = modeJava
		} else if n := len(m); n >= 11 && m[n-1] == ':' && m[n-2] == 'e' && strings.HasSuffix(m, "Call Trace:") {
			g.mode = modeKernel
			if exceptionLine(m) {
				g.mode = modeJava
			}
		} else {
			g.mode, g.pendMsg = modePending, m
		}
		return
	}
	switch {
	case strings.HasPrefix(m, "Traceback (most recent call last)") || strings.HasPrefix(r.text, "Traceback (most recent call last)"):
		g.mode = modePython
	case strings.HasPrefix(m, "panic: ") || strings.HasPrefix(m, "fatal error: ") || strings.HasPrefix(r.text, "panic: "):
		g.mode = modeGo
	case strings.HasPrefix(m, "thread '") && strings.Contains(m, "panicked at"):
		g.mode = modeRust
		g.rustMsg = strings.HasSuffix(m, ":")
	case strings.HasPrefix(m, "Unhandled exception") || strings.HasPrefix(m, "Unhandled Exception") || exceptionLine(m):
		g.mode = modeJava
	case r.level >= lvWarn:
		g.mode = modeJava
	}
}

// resolveMode works out a pending mode (see modePending) and returns the
// mode. It must run before the grouper's state is copied or kept past the
// block its head's message lies in.
func (g *grouper) resolveMode() uint8 {
	if g.mode == modePending {
		g.mode = modeNone
		if exceptionLine(g.pendMsg) {
			g.mode = modeJava
		}
		g.pendMsg = ""
	}
	return g.mode
}

// innerException reports whether s is a .NET inner exception,
// "---> System.IO.IOException: disk"; Docker's classic builder prints
// " ---> Running in 3f2e1d0c9b8a" and " ---> 9d3b1f6e2a74".
func innerException(s string) bool {
	rest, ok := strings.CutPrefix(s, "--->")
	return ok && exceptionLine(strings.TrimLeft(rest, " "))
}

// stackOpener marks the first bytes of the messages startEvent looks for:
// Traceback, panic, fatal error, thread '…' panicked, Unhandled exception.
var stackOpener = [256]bool{'T': true, 'p': true, 'f': true, 't': true, 'U': true}

func byteAt(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// errorException reports whether s is an exception line whose name says
// it is an error ("AttributeError: …", "java.io.IOException: …"), not a
// warning or an exit.
func errorException(s string) bool {
	if !exceptionLine(s) {
		return false
	}
	name, _, _ := strings.Cut(s, ":")
	name, _, _ = strings.Cut(name, " ")
	return strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Exception")
}

// hresult reports whether s starts with " (258):" or " (0x80131904):".
func hresult(s string) bool {
	if len(s) < 5 || s[0] != ' ' || s[1] != '(' {
		return false
	}
	i := 2
	for i < len(s) && (isDigit(s[i]) || s[i] == 'x' || s[i] == '-' || (s[i]|0x20) >= 'a' && (s[i]|0x20) <= 'f') {
		i++
	}
	return i > 2 && i+1 < len(s) && s[i] == ')' && s[i+1] == ':'
}

// exceptionLine reports whether s starts like an exception line:
// "java.lang.IllegalStateException: msg", "ValueError: msg",
// "System.InvalidOperationException: msg", "Microsoft.Data.SqlClient.
// SqlException (0x80131904): msg".
func exceptionLine(s string) bool {
	end := 0
	for end < len(s) && excNameByte[s[end]] {
		end++
	}
	if end < len(s) && s[end] != ':' && s[end] != ' ' {
		return false
	}
	tok := s[:end]
	if len(tok) < 4 {
		return false
	}
	if end < len(s) && s[end] == ' ' {
		// .NET prints a native error code or HRESULT between the name and
		// the message: "System.ComponentModel.Win32Exception (258): The
		// wait operation timed out."
		if !hresult(s[end:]) {
			return false
		}
		end = len(s)
	}
	for _, suf := range [...]string{"Exception", "Error", "Throwable", "Failure", "Fault", "Panic", "Interrupt", "Exit"} {
		if strings.HasSuffix(tok, suf) {
			return true
		}
	}
	// A qualified name ending in a capitalised class, followed by ':'.
	if dot := strings.LastIndexByte(tok, '.'); dot > 0 && dot+1 < len(tok) && tok[dot+1] >= 'A' && tok[dot+1] <= 'Z' && end < len(s) {
		return strings.Count(tok, ".") >= 2
	}
	return false
}

// excNameByte marks the bytes of an exception's (qualified) name.
var excNameByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isAlpha(byte(c)) || isDigit(byte(c)) || c == '.' || c == '_' || c == '$'
	}
	return t
}()

// goFrame reports whether s looks like a Go stack frame's function line:
// "main.main()", "net/http.(*conn).serve(0xc000126000)".
func goFrame(s string) bool {
	p := strings.IndexByte(s, '(')
	if p <= 0 || s[len(s)-1] != ')' {
		return false
	}
	sp := strings.IndexByte(s, ' ')
	return (sp < 0 || sp > p) && strings.IndexByte(s[:p], '.') >= 0
}

// visible is the line as a terminal shows it: without ANSI escape
// sequences, and where a carriage return inside the line rewrote it
// (progress bars, CI runners' "\r\x1b[0K" line resets), the last
// non-blank text written after one. Line numbers are not affected: the
// '\r' is not a line break.
func visible(s string) string {
	s = stripANSI(s)
	r := strings.IndexByte(s, '\r')
	if r < 0 {
		return s
	}
	for {
		r = strings.LastIndexByte(s, '\r')
		if r < 0 {
			return s
		}
		if !isBlank(s[r+1:]) {
			return s[r+1:]
		}
		s = s[:r]
	}
}

// stripANSI removes ANSI escape sequences (colours, cursor moves) and
// control strings (OSC, APC …).
func stripANSI(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		if i+1 < len(s) && strings.IndexByte("]_P^X", s[i+1]) >= 0 {
			// OSC (hyperlinks, titles), APC (Buildkite's "_bk;t=…"
			// timestamps), DCS, PM, SOS: up to BEL or ESC \
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
			continue
		}
		i++
	}
	return b.String()
}

// fallbackTime finds a timestamp the header detector missed: ISO 8601 at
// the start of a line (optionally bracketed), or an ESP-IDF "E (1234)"
// uptime. It returns the text and Unix ms (uptime ms for ESP-IDF).
func fallbackTime(s string) (string, int64) {
	t := s
	off := 0
	if len(t) > 0 && t[0] == '[' {
		t, off = t[1:], 1
	}
	if len(t) >= 19 && isDigit(t[0]) && isDigit(t[3]) && t[4] == '-' && t[7] == '-' && (t[10] == 'T' || t[10] == ' ') && t[13] == ':' && t[16] == ':' {
		y, mo, d := atoi(t[0:4]), atoi(t[5:7]), atoi(t[8:10])
		hh, mm, ss := atoi(t[11:13]), atoi(t[14:16]), atoi(t[17:19])
		n := 19
		frac := 0
		if n < len(t) && (t[n] == '.' || t[n] == ',') {
			k := n + 1
			for k < len(t) && isDigit(t[k]) {
				k++
			}
			digits := t[n+1 : k]
			if len(digits) > 3 {
				digits = digits[:3]
			}
			for len(digits) < 3 {
				digits += "0"
			}
			frac = atoi(digits)
			n = k
		}
		if mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60 {
			return "", 0
		}
		ms := time.Date(y, time.Month(mo), d, hh, mm, ss, 0, time.UTC).UnixMilli() + int64(frac)
		return s[off : off+n], ms
	}
	if len(s) >= 5 && letterLevel(s[0]) != lvNone && s[1] == ' ' && s[2] == '(' {
		k := 3
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > 3 && k < len(s) && s[k] == ')' {
			return s[2 : k+1], int64(atoi(s[3:k])) + 1
		}
	}
	return "", 0
}
