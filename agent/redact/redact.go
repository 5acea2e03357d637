// Package redact removes secrets (tokens, passwords, keys, auth headers,
// private keys, passwords in connection strings) from text before it reaches
// a model prompt or a stored memory. Line structure is kept intact: a
// redacted text has exactly as many lines as the original, and everything
// that is not a secret is left as it was.
//
// String works on a whole text. Logs are read line by line, so Redactor
// offers the same rules one line at a time and remembers whether it is
// inside a private key block. Both are safe for concurrent use in the sense
// that String has no shared state; a Redactor belongs to one reader.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// rule is one pattern. Groups named "keep" are kept and the group named
// "secret" is masked; a rule without a "secret" group masks the whole match.
type rule struct {
	name string
	re   *regexp.Regexp
}

// The order matters: headers and key=value forms first, so that "Bearer
// xoxb-…" becomes one mask instead of two.
var rules = []rule{
	// Authorization: Bearer abc / Proxy-Authorization: Basic abc / "authorization": "token abc"
	{"auth_header", regexp.MustCompile(`(?i)(?P<keep>\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate|apikey)\s+)?)(?P<secret>[^\s"',;]+)`)},
	// Bearer abc (anywhere, e.g. curl -H lines that lost their header name)
	{"bearer", regexp.MustCompile(`(?i)(?P<keep>\b(?:bearer|basic)\s+)(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)`)},
	// scheme://user:password@host
	{"url_password", regexp.MustCompile(`(?i)(?P<keep>\b[a-z][a-z0-9+.\-]*://[^:/\s@]*:)(?P<secret>[^@\s/]+)(?P<keep2>@)`)},
	// password=..., "api_key": "...", token: ..., client_secret=...
	{"key_value", regexp.MustCompile(`(?i)(?P<keep>\b[a-z0-9_.\-]*(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|credentials?|session[_\-]?id|cookie)[a-z0-9_.\-]*["']?\s*(?:[:=]|=>)\s*["']?)(?P<secret>[^\s"',;&]+)`)},
	// Slack tokens.
	{"slack", regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9\-]{10,}|\bxapp-[0-9]-[A-Za-z0-9\-]{10,}`)},
	// GitHub tokens.
	{"github", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{20,}`)},
	// AWS access key ids.
	{"aws", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`)},
	// Stripe keys.
	{"stripe", regexp.MustCompile(`\b[rs]k_(?:live|test)_[0-9A-Za-z]{10,}`)},
	// OpenAI and Anthropic style keys.
	{"sk", regexp.MustCompile(`\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`)},
	// Google API keys.
	{"google", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	// JSON Web Tokens.
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}`)},
}

var (
	beginKey = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
	endKey   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
)

// String returns s with secrets replaced by Mask and the number of
// replacements. A private key block counts once; its lines between BEGIN
// and END each become Mask.
func String(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	var r Redactor
	lines := strings.Split(s, "\n")
	total := 0
	for i, l := range lines {
		out, n := r.Line(l)
		lines[i] = out
		total += n
	}
	if total == 0 {
		return s, 0
	}
	return strings.Join(lines, "\n"), total
}

// Redactor redacts a text one line at a time, tracking private key blocks
// that span lines. The zero value is ready to use. Not safe for concurrent
// use: one Redactor per reader.
type Redactor struct {
	inKey   bool
	counted bool // the current key block has been counted
}

// Line redacts one line (without its "\n"; a trailing "\r" is kept) and
// returns it with the number of replacements.
func (r *Redactor) Line(line string) (string, int) {
	if r.inKey {
		if loc := endKey.FindStringIndex(line); loc != nil {
			r.inKey = false
			rest, n := redactLine(line[loc[1]:])
			return line[:loc[1]] + rest, n
		}
		n := 0
		if !r.counted {
			r.counted, n = true, 1
		}
		if strings.HasSuffix(line, "\r") {
			return Mask + "\r", n
		}
		return Mask, n
	}
	if loc := beginKey.FindStringIndex(line); loc != nil {
		head, n := redactLine(line[:loc[0]])
		after := line[loc[1]:]
		if e := endKey.FindStringIndex(after); e != nil {
			// One-line block (e.g. a JSON string with \n escapes).
			tail, m := redactLine(after[e[1]:])
			return head + line[loc[0]:loc[1]] + Mask + after[e[0]:e[1]] + tail, n + m + 1
		}
		r.inKey, r.counted = true, false
		suffix := ""
		if strings.TrimSpace(after) != "" {
			suffix = Mask
			r.counted = true
			n++
		}
		if strings.HasSuffix(line, "\r") {
			suffix += "\r"
		}
		return head + line[loc[0]:loc[1]] + suffix, n
	}
	return redactLine(line)
}

// InKey reports whether the last line read left the redactor inside a
// private key block.
func (r *Redactor) InKey() bool { return r.inKey }

func redactLine(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	total := 0
	for _, ru := range rules {
		if !ru.re.MatchString(s) {
			continue
		}
		n := 0
		s = replace(ru.re, s, &n)
		total += n
	}
	return s, total
}

// replace masks the "secret" group (or the whole match) of each match,
// keeping values that are already masked or are short plain numbers
// ("tokens=512" is a count, not a secret).
func replace(re *regexp.Regexp, s string, n *int) string {
	secret := re.SubexpIndex("secret")
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[0], m[1]
		if secret > 0 {
			start, end = m[2*secret], m[2*secret+1]
			if start < 0 {
				continue
			}
		}
		val := s[start:end]
		if strings.HasPrefix(val, Mask) || strings.HasPrefix(Mask, val) || isSmallNumber(val) || isPlaceholder(val) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Mask)
		last = end
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isSmallNumber(v string) bool {
	if len(v) == 0 || len(v) > 6 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isPlaceholder keeps values that say a secret is absent or hidden.
func isPlaceholder(v string) bool {
	switch strings.ToLower(strings.Trim(v, "<>{}()*")) {
	case "", "null", "nil", "none", "true", "false", "redacted", "hidden", "xxx", "xxxx", "***", "masked", "empty", "missing", "invalid", "expired", "required", "set", "unset":
		return true
	}
	return strings.Trim(v, "*x.X") == ""
}
