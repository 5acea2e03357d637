package miner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills/logscan/internal/loggen"
)

// parseAll parses lines with one Parser (its header memo on) and with
// Format.Parse (no caches) and fails on the first difference. It returns
// the memo's lookups and hits.
func parseAll(t *testing.T, name string, lines []string) (int, int) {
	t.Helper()
	f := Learn(lines[:min(len(lines), 2000)])
	p := f.NewParser()
	for i, l := range lines {
		if got, want := p.Parse(l), f.Parse(l); got != want {
			t.Fatalf("%s:%d %q:\nParser %+v\nFormat %+v", name, i+1, l, got, want)
		}
	}
	return p.memo.looks, p.memo.hits
}

// TestParserMemoSameHeaders: on the generated service log, the seed lines
// and every log under testdata and ../shared/logs, a Parser (which takes
// most headers from its memo) returns exactly what Format.Parse does; and
// the memo is really used, or this test proves nothing.
func TestParserMemoSameHeaders(t *testing.T) {
	var buf bytes.Buffer
	if err := loggen.Write(&buf, 4<<20, 1); err != nil {
		t.Fatal(err)
	}
	gen := strings.Split(buf.String(), "\n")
	looks, hits := parseAll(t, "generated", gen)
	if looks < len(gen)/2 || hits*10 < looks*9 {
		t.Fatalf("generated log: %d lines, %d memo lookups, %d hits; want most lines looked up and 90%% hits", len(gen), looks, hits)
	}
	t.Logf("generated log: %d lines, %d memo lookups, %d hits", len(gen), looks, hits)

	b, err := os.ReadFile("testdata/lines.txt")
	if err != nil {
		t.Fatal(err)
	}
	parseAll(t, "lines.txt", strings.Split(string(b), "\n"))

	var files []string
	for _, pat := range []string{"../testdata/*.log", "../../../../shared/logs/samples/*.log", "../../../../shared/logs/loghub2k/*/*.log"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no test logs found")
	}
	for _, path := range files {
		lines := readLines(t, path)
		looks, hits := parseAll(t, filepath.Base(path), lines)
		t.Logf("%s: %d lines, %d memo lookups, %d hits", filepath.Base(path), len(lines), looks, hits)
	}
}

// TestParserMemoKeyEnds pins the cases where a remembered header tail must
// not be reused: what follows the tail decides how the items parse.
func TestParserMemoKeyEnds(t *testing.T) {
	cases := []struct {
		name, first, second string
		learn               []string // lines to learn the layout from; nil: first, first, second
	}{
		// "name :" reads the byte after the colon.
		{"spring", "2026-11-28 09:58:00.468  INFO 1 --- [main] c.e.App : Starting", "2026-11-28 09:58:00.469  INFO 1 --- [main] c.e.App :x Starting", nil},
		// The message may start after more spaces, or the line may end.
		{"spaces", "2026-11-28 09:58:00.468 ERROR boom", "2026-11-28 09:58:00.469 ERROR", nil},
		// A lone capital is a level only when a component follows.
		{"lone level", "2026-11-28 09:58:00 E tag: boom", "2026-11-28 09:58:00 E tag boom", nil},
		// ... also where the layout ends at the level, so the component
		// after it is not an item of the header.
		{"lone level last", "2026-11-28 09:58:00 E tag: boom", "2026-11-28 09:58:01 E tag boom",
			[]string{"2026-11-28 09:58:00 ERROR a", "2026-11-28 09:58:00 ERROR b", "2026-11-28 09:58:00 E tag: boom"}},
		// A syslog host is a host only when a component follows.
		{"host", "Dec 10 06:55:46 LabSZ sshd[24200]: x", "Dec 10 06:55:47 LabSZ sshd 24200 x", nil},
		// The two-word component "prog 1.2:" reads the second word.
		{"two words", "Jun 14 15:16:01 combo syslogd 1.4.1: restart", "Jun 14 15:16:02 combo syslogd 1.4.1 restart", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			learn := c.learn
			if learn == nil {
				learn = []string{c.first, c.first, c.second}
			}
			f := Learn(learn)
			p := f.NewParser()
			for _, l := range []string{c.first, c.second, c.first, c.second} {
				if got, want := p.Parse(l), f.Parse(l); got != want {
					t.Fatalf("%q:\nParser %+v\nFormat %+v", l, got, want)
				}
			}
		})
	}
}

// FuzzParserMemo: a line, then the same line cut short and given another
// ending, parse with a Parser exactly as with Format.Parse, whatever the
// memo remembered from the first. The layout is learned from the line and
// from other, so it may end before the line's header does.
//
//	go test -run '^$' -fuzz FuzzParserMemo -fuzztime 60s ./skills/logscan/miner/
func FuzzParserMemo(f *testing.F) {
	for i, l := range seedLines(f) {
		f.Add(l, " : x", uint16(i*7), l)
		f.Add(l, "", uint16(i), l[:min(len(l), 26)]+" x")
	}
	f.Add("2026-11-28 09:58:00.468  INFO 1 --- [main] c.e.App : Starting", ":x", uint16(20), "")
	f.Add("Jun 14 15:16:01 combo syslogd 1.4.1: restart", " 1.4.1 x", uint16(60), "")
	f.Add("2026-11-28 09:58:00 E tag: boom", " boom", uint16(6), "2026-11-28 09:58:00 ERROR a")
	f.Add("  2047:20240529:085755.556 cannot send list", " x", uint16(12), " 52919:20240529:102340.231 server #3 started")
	f.Fuzz(func(t *testing.T, line, tail string, cut uint16, other string) {
		fm := Learn([]string{line, other, other})
		p := fm.NewParser()
		k := len(line) - int(cut)%(len(line)+1)
		variants := []string{line, line[:k] + tail, line, line[:k] + tail + line[k:]}
		for _, v := range variants {
			if got, want := p.Parse(v), fm.Parse(v); got != want {
				t.Fatalf("%q then %q (layout %q):\nParser %+v\nFormat %+v", line, v, fm.Layout(), got, want)
			}
		}
	})
}

// TestMemoHashLen checks the long keys' hash: keys that share their first
// memoHashLen bytes and differ later (the logger after the thread) lie in
// chains of about one, and each key is still found, also after a shorter
// key made every key be hashed again.
func TestMemoHashLen(t *testing.T) {
	var m hdrMemo
	var keys []string
	for _, lv := range []string{"  INFO", "  WARN", " ERROR"} {
		for th := range 40 {
			for _, lg := range []string{"c.e.db.Pool", "c.e.jobs.Scheduler", "c.e.cache.Redis", "c.e.api.OrderController"} {
				keys = append(keys, fmt.Sprintf("%s 1 --- [worker-%d] %s : ", lv, th, lg))
			}
		}
	}
	// the shortest key comes last, so the others are hashed again
	keys = append(keys, "  INFO 1 --- [main] c.e.App : ")
	for i, k := range keys {
		m.insert(k, memoParse{level: "INFO", msg: len(k)})
		if i == len(keys)-2 && m.hashLen != len("  INFO 1 --- [worker-0] c.e.db.Pool : ") {
			t.Fatalf("hashLen %d, want the shortest key's length", m.hashLen)
		}
	}
	if m.hashLen != len(keys[len(keys)-1]) {
		t.Fatalf("hashLen %d after a shorter key, want %d", m.hashLen, len(keys[len(keys)-1]))
	}
	for i, k := range keys {
		if got := m.lookup(k + "message"); got != int32(i) {
			t.Fatalf("lookup(%q) = %d, want %d", k, got, i)
		}
	}
	if got := m.lookup("  INFO 1 --- [worker-7] c.e.db.Poolx : x"); got != -1 {
		t.Fatalf("a line no key starts found entry %d", got)
	}
	longest := 0
	for _, k := range m.tab {
		n := 0
		for ; k > 0; k = uint16(m.ents[k-1].next) {
			n++
		}
		longest = max(longest, n)
	}
	// 481 keys in 32768 slots: with the 24-byte prefix alone, chains of 4
	if longest > 3 {
		t.Fatalf("longest chain %d; keys that differ after the first %d bytes should spread", longest, memoHashLen)
	}
}
