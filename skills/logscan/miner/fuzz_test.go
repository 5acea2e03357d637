package miner

import (
	"os"
	"strings"
	"testing"
)

// Seeds: representative lines of many formats in testdata/lines.txt.
func seedLines(f *testing.F) []string {
	b, err := os.ReadFile("testdata/lines.txt")
	if err != nil {
		f.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// FuzzParse: Parse never panics, MsgStart/MsgEnd stay within the line, and
// learning from the line itself gives the same guarantees.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./skills/logscan/miner/
func FuzzParse(f *testing.F) {
	lines := seedLines(f)
	for _, l := range lines {
		f.Add(l)
	}
	fixed := Learn(lines)
	f.Fuzz(func(t *testing.T, line string) {
		for _, fm := range []*Format{fixed, Learn([]string{line, line})} {
			h := fm.Parse(line)
			if h.MsgStart < 0 || h.MsgStart > len(line) {
				t.Fatalf("MsgStart %d out of [0,%d]", h.MsgStart, len(line))
			}
			if h.MsgEnd != 0 && (h.MsgEnd < h.MsgStart || h.MsgEnd > len(line)) {
				t.Fatalf("MsgEnd %d out of [%d,%d]", h.MsgEnd, h.MsgStart, len(line))
			}
			_ = h.Msg(line)
		}
	})
}

// FuzzAdd: Add never panics, returns a valid cluster number, and equal
// template text always has the same id.
//
//	go test -run '^$' -fuzz FuzzAdd -fuzztime 60s ./skills/logscan/miner/
func FuzzAdd(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add(l, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		m := New()
		ia, ib, ia2 := m.Add(a), m.Add(b), m.Add(a)
		for _, id := range []int{ia, ib, ia2} {
			if id < 0 || id >= m.Clusters() {
				t.Fatalf("cluster %d out of [0,%d)", id, m.Clusters())
			}
		}
		if ia != ia2 {
			t.Fatalf("same message, clusters %d and %d", ia, ia2)
		}
		m.Finish()
		ta, tb := m.Template(ia), m.Template(ib)
		if ta.ID != TemplateID(ta.Text) || tb.ID != TemplateID(tb.Text) {
			t.Fatal("id is not the hash of the text")
		}
		if (ta.Text == tb.Text) != (ta.ID == tb.ID) {
			t.Fatal("equal text, different ids (or the reverse)")
		}
		// the template of a message is reproducible in a fresh miner
		m2 := New()
		m2.Add(a)
		m2.Finish()
		if m2.Template(0).Text == "" && strings.TrimFunc(a, func(r rune) bool { return r <= ' ' }) != "" {
			t.Fatalf("empty template for %q", a)
		}
	})
}
