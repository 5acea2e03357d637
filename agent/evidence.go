package agent

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// scanFile reads the lines of a file; the engine's Scan (decompression,
// CRLF, '\n'-only line counting).
var scanFile = logscan.Scan

// unverifiedMark is appended to a citation the agent could not verify.
const unverifiedMark = " (unverified)"

// Citation forms: "app.log:123", "app.log L123", "app.log line 123", "L123".
var citeRE = regexp.MustCompile(`(?:([A-Za-z0-9_][A-Za-z0-9_.\-]*\.[A-Za-z0-9]+)(?::|\s+L|\s+line\s+|#L))?\bL?(\d{1,9})\b`)

type citation struct {
	start, end int // byte span of the citation in the answer
	file       string
	line       int
	quote      string
}

// verifyEvidence checks every cited line of answer against the files and
// marks the ones that do not exist or do not say what the answer quotes.
// It returns the checked answer and the evidence, verified or not.
func (a *Agent) verifyEvidence(ctx context.Context, answer string, files []skills.File) (string, []bot.Evidence) {
	cites := findCitations(answer, files)
	if len(cites) == 0 {
		return answer, nil
	}
	byName := map[string]skills.File{}
	for _, f := range files {
		byName[f.Name] = f
		byName[strings.ToLower(f.Name)] = f
	}
	want := map[string]map[int]bool{}
	for _, c := range cites {
		if f, ok := byName[c.file]; ok {
			if want[f.Path] == nil {
				want[f.Path] = map[int]bool{}
			}
			want[f.Path][c.line] = true
		}
	}
	got := map[string]map[int]string{}
	for path, lines := range want {
		got[path] = readLines(ctx, path, lines)
	}
	var (
		b        strings.Builder
		evidence []bot.Evidence
		seen     = map[string]bool{}
		last     = 0
	)
	for _, c := range cites {
		f, okFile := byName[c.file]
		text, okLine := "", false
		if okFile {
			text, okLine = got[f.Path][c.line]
		}
		red, _ := redactLine(text)
		ok := okFile && okLine && (c.quote == "" || quoteMatches(c.quote, text) || quoteMatches(c.quote, red))
		b.WriteString(answer[last:c.end])
		last = c.end
		if !ok && !strings.HasPrefix(answer[c.end:], unverifiedMark) {
			b.WriteString(unverifiedMark)
		}
		name := c.file
		if okFile {
			name = f.Name
		}
		k := name + ":" + strconv.Itoa(c.line)
		if seen[k] {
			continue
		}
		seen[k] = true
		ev := bot.Evidence{File: name, Line: c.line, Verified: ok}
		if okLine {
			ev.Text = red
		} else {
			ev.Text = c.quote
		}
		evidence = append(evidence, ev)
	}
	b.WriteString(answer[last:])
	return b.String(), evidence
}

// cutMarkerRE is the engine's mark of a cut line, "…[+35 chars]".
var cutMarkerRE = regexp.MustCompile(`…\[\+\d+ chars\]`)

// tidyCutMarkers turns the engine's "…[+35 chars]" into a plain "…", which
// readers and the evidence check both take as "the rest of the line": a
// quoted prefix then verifies against the full line.
func tidyCutMarkers(answer string) string {
	return cutMarkerRE.ReplaceAllString(answer, "…")
}

func redactLine(s string) (string, int) {
	n := 0
	return redactText(s, &n), n
}

// findCitations finds cited lines and resolves a bare L123 to the file
// named nearest before it (same line first), or the only file.
//
// The agent's own saved outputs (output-step2-read-log.txt) can be named
// explicitly, but they do not count as attachments for the "only file"
// rule: a follow-up that saved an output still resolves a bare L37 to the
// one attached log.
func findCitations(answer string, files []skills.File) []citation {
	names := map[string]string{}
	var attached []string
	for _, f := range files {
		names[strings.ToLower(f.Name)] = f.Name
		if !isAgentOutput(f.Name) {
			attached = append(attached, f.Name)
		}
	}
	var out []citation
	lastFile := ""
	for _, m := range citeRE.FindAllStringSubmatchIndex(answer, -1) {
		whole := answer[m[0]:m[1]]
		file := ""
		if m[2] >= 0 {
			file = answer[m[2]:m[3]]
		}
		bare := file == ""
		if bare && !strings.HasPrefix(whole, "L") {
			continue // a plain number, not a citation
		}
		if bare && m[0] > 0 && isWordByte(answer[m[0]-1]) {
			continue
		}
		if !bare {
			if canon, ok := names[strings.ToLower(file)]; ok {
				file = canon
			} else if !looksLikeLogName(file) {
				continue // a version number, a host:port …
			}
			lastFile = file
		} else {
			file = nearestFile(answer[:m[0]], names)
			if file == "" {
				file = lastFile
			}
			if file == "" && len(attached) == 1 {
				file = attached[0]
			}
		}
		line, err := strconv.Atoi(answer[m[4]:m[5]])
		if err != nil || line <= 0 {
			continue
		}
		out = append(out, citation{start: m[0], end: m[1], file: file, line: line, quote: quoteAfter(answer[m[1]:])})
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// looksLikeLogName accepts names with a file-like extension.
func looksLikeLogName(name string) bool {
	ext := strings.ToLower(name[strings.LastIndexByte(name, '.')+1:])
	switch ext {
	case "log", "txt", "out", "err", "gz", "zip", "json", "jsonl", "csv", "trace":
		return true
	}
	return false
}

// nearestFile returns the attached file named last on the current line of
// before.
func nearestFile(before string, names map[string]string) string {
	line := before
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		line = before[i+1:]
	}
	low := strings.ToLower(line)
	best, bestAt := "", -1
	for l, canon := range names {
		if i := strings.LastIndex(low, l); i > bestAt {
			best, bestAt = canon, i
		}
	}
	return best
}

// quoteAfter returns the quoted text right after a citation:
// `L12: "text"`, "L12 — `text`", "L12 `text`".
func quoteAfter(rest string) string {
	rest = strings.TrimPrefix(rest, unverifiedMark)
	i := 0
	for i < len(rest) && i < 8 && strings.ContainsRune(" \t:—–-)(*", rune(rest[i])) {
		i++
	}
	if strings.HasPrefix(rest[i:], "—") || strings.HasPrefix(rest[i:], "–") {
		i += 3
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
	}
	if i >= len(rest) {
		return ""
	}
	var closing string
	switch {
	case rest[i] == '"':
		closing = `"`
	case rest[i] == '`':
		closing = "`"
	case strings.HasPrefix(rest[i:], "“"):
		closing = "”"
		i += len("“") - 1
	default:
		return ""
	}
	body := rest[i+1:]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		body = body[:nl]
	}
	end := strings.Index(body, closing)
	if end < 0 {
		return ""
	}
	return body[:end]
}

var spaceRE = regexp.MustCompile(`\s+`)

// quoteMatches reports whether the quote appears in the line, ignoring
// whitespace runs and case; "…" or "..." in the quote match any text.
func quoteMatches(quote, line string) bool {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))) }
	q := strings.ReplaceAll(quote, "...", "…")
	l := norm(line)
	pos := 0
	any := false
	for _, part := range strings.Split(q, "…") {
		p := norm(part)
		if p == "" {
			continue
		}
		any = true
		i := strings.Index(l[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	return any || strings.TrimSpace(quote) == ""
}

// readLines returns the wanted lines of path (as the engine numbers them).
func readLines(ctx context.Context, path string, want map[int]bool) map[int]string {
	maxLine := 0
	for l := range want {
		maxLine = max(maxLine, l)
	}
	out := make(map[int]string, len(want))
	err := scanFile(ctx, path, logscan.Options{}, func(n int, text string) error {
		if want[n] {
			out[n] = text
		}
		if n >= maxLine {
			return logscan.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, logscan.ErrStop) {
		return out
	}
	return out
}
