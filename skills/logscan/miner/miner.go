// Package miner detects where a log line's header ends (timestamp, level,
// pid, component) and mines message templates with no per-file
// configuration. Template ids are stable hashes of the template text, so
// the same template has the same id in every file.
//
// THE EXPORTED API BELOW IS A CONTRACT used by package logscan: its owner
// may add to it, but must not rename or remove. The bodies are a naive
// placeholder until the real miner lands.
package miner

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Normalised levels.
const (
	LevelFatal = "fatal"
	LevelError = "error"
	LevelWarn  = "warn"
	LevelInfo  = "info"
	LevelDebug = "debug"
	LevelTrace = "trace"
)

// Header is what the detector found at the start of one line.
type Header struct {
	// Time is the timestamp text as written; "" when none.
	Time string
	// UnixMS is the timestamp in Unix milliseconds; 0 when unknown. Relative
	// clocks (uptime, ESP-IDF "(1234)") give milliseconds since start.
	UnixMS int64
	// Level is a normalised level ("" when none).
	Level     string
	Component string
	// MsgStart is the byte offset where the message starts.
	MsgStart int
}

// Format is a header layout learned from a sample of one file's lines.
// Safe for concurrent use after Learn.
type Format struct{}

// Learn learns the header layout from the first lines of a file (a few
// thousand are plenty); it never fails: with no header found every line is
// all message.
func Learn(sample []string) *Format { return &Format{} }

// Parse splits one line.
func (f *Format) Parse(line string) Header { return Header{} }

// Template is a mined template.
type Template struct {
	ID   string // stable: TemplateID(Text)
	Text string // variables shown as <*>
}

// TemplateID returns the stable id of a template text.
func TemplateID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:6])
}

// Miner clusters messages into templates. Not safe for concurrent use.
type Miner struct {
	index map[string]int
	texts []string
}

// New returns an empty miner.
func New() *Miner { return &Miner{index: map[string]int{}} }

// Add mines one message (the part after the header) and returns its
// cluster number. Cluster numbers are dense, from 0.
func (m *Miner) Add(msg string) int {
	t := mask(msg)
	if i, ok := m.index[t]; ok {
		return i
	}
	m.index[t] = len(m.texts)
	m.texts = append(m.texts, t)
	return len(m.texts) - 1
}

// Template returns the current template of a cluster. After Finish it
// returns the final template (clusters merged by the post-pass share it).
func (m *Miner) Template(cluster int) Template {
	return Template{ID: TemplateID(m.texts[cluster]), Text: m.texts[cluster]}
}

// Finish runs the post-pass (merges) after the last Add.
func (m *Miner) Finish() {}

// Clusters returns the number of clusters.
func (m *Miner) Clusters() int { return len(m.texts) }

func mask(msg string) string {
	f := strings.Fields(msg)
	for i, w := range f {
		if strings.ContainsAny(w, "0123456789") {
			f[i] = "<*>"
		}
	}
	return strings.Join(f, " ")
}
