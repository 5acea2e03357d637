package querykb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrEntry reports a knowledge-base file that cannot be used.
var ErrEntry = errors.New("knowledge-base entry")

// regexPrefix marks a pattern that is a regular expression; other
// patterns are plain phrases. Both match case-insensitively.
const regexPrefix = "re:"

// Entry is one known failure: a markdown file whose front matter has
// title, patterns, cause, fix, tags and optional examples (log lines that
// show it); the body is extra detail.
type Entry struct {
	ID       string   `yaml:"-" json:"id"` // file name without .md
	Title    string   `yaml:"title" json:"title"`
	Patterns []string `yaml:"patterns" json:"patterns"`
	Cause    string   `yaml:"cause" json:"cause"`
	Fix      string   `yaml:"fix" json:"fix"`
	Tags     []string `yaml:"tags" json:"tags,omitempty"`
	Examples []string `yaml:"examples" json:"examples,omitempty"`
	Body     string   `yaml:"-" json:"body,omitempty"`
	Source   string   `yaml:"-" json:"source"` // "builtin" or the file path

	patterns []pattern
	tokens   map[string]bool // words of title, tags and cause
}

// pattern is one compiled pattern of an entry.
type pattern struct {
	text   string         // as written
	re     *regexp.Regexp // nil for a phrase
	phrase string         // lowercased phrase
	anchor string         // lowercased literal every match contains; "" if none
}

// ParseEntry reads one entry; id names it in results.
func ParseEntry(id string, md []byte) (*Entry, error) {
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	md = bytes.ReplaceAll(md, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(md, []byte("---\n")) {
		return nil, fmt.Errorf("%w %s: must start with a '---' front matter line", ErrEntry, id)
	}
	rest := md[4:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return nil, fmt.Errorf("%w %s: front matter has no closing '---' line", ErrEntry, id)
	}
	e := &Entry{ID: id}
	if err := yaml.Unmarshal(rest[:end], e); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrEntry, id, err)
	}
	body := rest[end+4:]
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		e.Body = strings.TrimSpace(string(body[i+1:]))
	}
	var errs []error
	if strings.TrimSpace(e.Title) == "" {
		errs = append(errs, errors.New("title is required"))
	}
	if strings.TrimSpace(e.Cause) == "" || strings.TrimSpace(e.Fix) == "" {
		errs = append(errs, errors.New("cause and fix are required"))
	}
	if len(e.Patterns) == 0 {
		errs = append(errs, errors.New("at least one pattern is required"))
	}
	for _, p := range e.Patterns {
		cp, err := compilePattern(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e.patterns = append(e.patterns, cp)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrEntry, id, err)
	}
	e.tokens = map[string]bool{}
	for _, t := range tokens(e.Title + " " + strings.Join(e.Tags, " ") + " " + e.Cause) {
		e.tokens[t] = true
	}
	return e, nil
}

func compilePattern(p string) (pattern, error) {
	if strings.TrimSpace(p) == "" {
		return pattern{}, errors.New("empty pattern")
	}
	if expr, ok := strings.CutPrefix(p, regexPrefix); ok {
		re, err := regexp.Compile("(?i)" + expr)
		if err != nil {
			return pattern{}, fmt.Errorf("pattern %q: %w", p, err)
		}
		return pattern{text: p, re: re, anchor: literalAnchor(expr)}, nil
	}
	ph := strings.ToLower(p)
	return pattern{text: p, phrase: ph, anchor: ph}, nil
}

// literalAnchor returns the leading literal text of a regular expression
// (lowercased) when it is long enough to prefilter lines with; "" when a
// line must always be tested. Escaped punctuation (\[, \.) counts as
// literal; a leading \b is skipped.
func literalAnchor(expr string) string {
	if topLevelAlternation(expr) {
		return ""
	}
	var b []byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\\' && i+1 < len(expr) {
			n := expr[i+1]
			switch {
			case n == 'b' && len(b) == 0:
				i++
				continue
			case !isAlnum(n):
				if i+2 < len(expr) && strings.IndexByte("?*{", expr[i+2]) >= 0 {
					break // the escaped char is optional: stop before it
				}
				b = append(b, n)
				i++
				continue
			}
			break
		}
		if strings.IndexByte(`.+*?()[]{}^$|`, c) >= 0 {
			if (c == '?' || c == '*' || c == '{') && len(b) > 0 {
				b = b[:len(b)-1]
			}
			break
		}
		b = append(b, c)
	}
	if len(b) >= 4 {
		return strings.ToLower(string(b))
	}
	return ""
}

// topLevelAlternation reports a '|' outside groups and classes.
func topLevelAlternation(expr string) bool {
	depth, class := 0, false
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// match reports whether the line matches; lower is the line lowercased.
func (p pattern) match(line, lower string) bool {
	if p.re != nil {
		return p.re.MatchString(line)
	}
	return strings.Contains(lower, p.phrase)
}

// LoadFS loads every *.md of fsys (sorted), skipping broken ones, which
// are returned as problems.
func LoadFS(fsys fs.FS, source string) (entries []*Entry, problems []error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, []error{err}
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.EqualFold(n, "README.md") {
			continue
		}
		md, err := fs.ReadFile(fsys, n)
		if err != nil {
			problems = append(problems, fmt.Errorf("%w %s: %v", ErrEntry, n, err))
			continue
		}
		e, err := ParseEntry(strings.TrimSuffix(n, ".md"), md)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		e.Source = source
		entries = append(entries, e)
	}
	return entries, problems
}

// LoadDir loads the entries of an operator's folder.
func LoadDir(dir string) ([]*Entry, []error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, []error{fmt.Errorf("knowledge-base dir: %w", err)}
	}
	entries, problems := LoadFS(os.DirFS(dir), dir)
	for _, e := range entries {
		e.Source = filepath.Join(dir, e.ID+".md")
	}
	return entries, problems
}

// stopwords are left out of text matching.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for are was were with from that this what why how does did not but into when then than
	there their they them its it's has have had can could would should will just keep keeps kept our your you any all
	also out get got about after before over under very more most some such only other error errors failed failure fails
	fail log logs line lines mean means see seen happen happened happens`) {
		stopwords[w] = true
	}
}

var wordRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9_]{2,}`)

// tokens splits text into lowercased words for text matching, with a
// crude stem (a trailing "s", "ed" or "ing" dropped).
func tokens(text string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(text, -1) {
		w = strings.ToLower(w)
		if stopwords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}
