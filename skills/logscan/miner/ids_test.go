package miner

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Random identifiers of the shapes real logs are full of (session and
// request ids, pod names, short SHAs, tokens) are variables even with few
// or no digits: a generated corpus of templates filled with fresh ids must
// give back exactly its templates.

const (
	alnumLower = "abcdefghijklmnopqrstuvwxyz0123456789"
	alnum62    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lettersMix = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	lower      = "abcdefghijklmnopqrstuvwxyz"
	hexDigits  = "0123456789abcdef"
	// Kubernetes' rand.String alphabet: no vowels, no 0, 1, 3
	k8sAlphabet = "bcdfghjklmnpqrstvwxz2456789"
)

type idGen struct{ r *rand.Rand }

func (g idGen) str(alphabet string, lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g idGen) b36() string { return g.str(alnumLower, 6, 13) }
func (g idGen) b62() string { return g.str(alnum62, 8, 22) }

// hexOdd: hex of an odd length, 5 to 13.
func (g idGen) hexOdd() string { n := 5 + 2*g.r.IntN(5); return g.str(hexDigits, n, n) }
func (g idGen) sha7() string   { return g.str(hexDigits, 7, 7) }
func (g idGen) hex32() string  { return g.str(hexDigits, 32, 32) }
func (g idGen) word() string   { return g.str(lower, 6, 10) }
func (g idGen) mixed() string  { return g.str(lettersMix, 6, 10) }
func (g idGen) pod() string {
	deploys := []string{"api", "checkout-web", "payments", "auth-proxy"}
	return deploys[g.r.IntN(len(deploys))] + "-" + g.str(k8sAlphabet, 9, 10) + "-" + g.str(k8sAlphabet, 5, 5)
}
func (g idGen) num() string { return fmt.Sprint(g.r.IntN(100000)) }

// idTemplates: the expected template text is not asserted (where "<*>"
// lands around punctuation is the masker's business); each entry is one
// event.
var idTemplates = []func(g idGen) string{
	func(g idGen) string { return "user " + g.sha7() + " logged in from session " + g.b36() },
	func(g idGen) string { return "session " + g.b36() + " closed" },
	func(g idGen) string { return g.pod() + " Started container app" },
	func(g idGen) string { return "Pulling image for pod " + g.pod() },
	func(g idGen) string { return "request_id=" + g.b62() + " status=ok" },
	func(g idGen) string { return "[req-" + g.mixed() + "] handling GET /v1/items" },
	func(g idGen) string { return "commit " + g.sha7() + " deployed to staging" },
	func(g idGen) string { return "cache miss for key " + g.hexOdd() },
	func(g idGen) string { return "token " + g.b62() + " expired" },
	func(g idGen) string { return "worker " + g.word() + " joined cluster" },
	func(g idGen) string { return "upload " + g.hex32() + " finished in " + g.num() + "ms" },
	func(g idGen) string { return "trace " + g.b36() + " span " + g.hexOdd() + " exported" },
	func(g idGen) string { return "Evicted pod default/" + g.pod() },
	func(g idGen) string { return "lease " + g.word() + " renewed by " + g.pod() },
	func(g idGen) string { return "job " + g.b36() + ": step build succeeded" },
	func(g idGen) string { return "connection " + g.b62() + " reset by peer" },
	func(g idGen) string { return g.mixed() + " heartbeat missed" },
	func(g idGen) string { return "container " + g.str(hexDigits, 12, 12) + " exited with code " + g.num() },
	func(g idGen) string { return "retrying request req-" + g.mixed() + " attempt " + g.num() },
	func(g idGen) string { return "object " + g.b62() + " stored in bucket " + g.word() },
}

// idCorpus returns n lines and the template index of each.
func idCorpus(seed uint64, n int) ([]string, []int) {
	g := idGen{rand.New(rand.NewPCG(seed, 99))}
	lines := make([]string, n)
	events := make([]int, n)
	for i := range lines {
		e := g.r.IntN(len(idTemplates))
		lines[i], events[i] = idTemplates[e](g), e
	}
	return lines, events
}

// groupingScore returns the grouping accuracy of templates against events
// and the number of distinct templates.
func groupingScore(ts []Template, events []int) (float64, int) {
	gt := make([]gtRow, len(ts))
	pred := map[int]string{}
	for i, t := range ts {
		gt[i] = gtRow{line: i + 1, event: fmt.Sprint(events[i])}
		pred[i+1] = t.Text
	}
	return groupingAccuracy(gt, pred), distinct(ts)
}

func TestRandomIDsCorpus(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		lines, events := idCorpus(seed, 2000)
		ts := mineAll(lines)
		ga, n := groupingScore(ts, events)
		t.Logf("seed %d: %d templates for %d events, GA %.4f", seed, n, len(idTemplates), ga)
		if n != len(idTemplates) || ga != 1 {
			got := map[int]map[string]int{}
			for i, tp := range ts {
				if got[events[i]] == nil {
					got[events[i]] = map[string]int{}
				}
				got[events[i]][tp.Text]++
			}
			for e := range idTemplates {
				if len(got[e]) > 1 {
					var ex []string
					for k := range got[e] {
						if len(ex) < 3 {
							ex = append(ex, fmt.Sprintf("%q", k))
						}
					}
					t.Logf("event %d split %d ways, e.g. %s", e, len(got[e]), strings.Join(ex, " "))
				}
			}
			t.Errorf("seed %d: %d templates, want %d; GA %.4f, want 1", seed, n, len(idTemplates), ga)
		}
	}
}

// Real words varying at one position are event types while they are few:
// "state changed to RUNNING" and "state changed to FAILED" stay apart, in
// a short message and as the first word, however often each repeats.
func TestLowCardinalityWordsKept(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	corpora := [][]string{
		{"state changed to RUNNING", "state changed to STOPPED", "state changed to FAILED"},
		{"cupsd startup succeeded", "syslogd startup succeeded", "klogd startup succeeded", "sdpd startup succeeded", "portmap startup succeeded"},
		{"Started container app", "Stopped container app", "Killing container app"},
		{"session opened", "session closed", "session expired"},
	}
	for _, words := range corpora {
		var lines []string
		var events []int
		for i := 0; i < 300; i++ {
			e := r.IntN(len(words))
			lines, events = append(lines, words[e]), append(events, e)
		}
		ga, n := groupingScore(mineAll(lines), events)
		if n != len(words) || ga != 1 {
			t.Errorf("%q...: %d templates for %d events, GA %.4f", words[0], n, len(words), ga)
		}
	}
}

func TestIDLike(t *testing.T) {
	for _, s := range []string{"k3jqxz", "x2kqp", "api-7d9f8b6c4-x2kqp", "[req-OKItjnPnm]", "kqzjxw", "AbXyQeZ", "3fa9c2e", "nvme0n1"} {
		if !idLike(s) {
			t.Errorf("idLike(%q) = false", s)
		}
	}
	for _, s := range []string{"ssh2", "log4j", "sha256", "float64", "cupsd", "syslogd", "portmap", "removeNotificationChildren", "succeeded", "RUNNING", "getRecentTasks", "pthread"} {
		if idLike(s) {
			t.Errorf("idLike(%q) = true", s)
		}
	}
}

// Fresh ids cost no new leaf once their position is known to vary: the
// leaf table (bounded by MaxLeaves, past which shapes are counted coarsely)
// does not grow with the number of ids.
func TestRandomIDsLeaves(t *testing.T) {
	lines, _ := idCorpus(4, 20000)
	m := New()
	for _, l := range lines {
		m.Add(l)
	}
	m.Finish()
	if n := len(m.Templates()); n != len(idTemplates) {
		t.Errorf("%d templates, want %d", n, len(idTemplates))
	}
	// each template needs a few distinct values per varying position
	// before it is known; after that no leaf is added
	if m.Clusters() > 50*len(idTemplates) {
		t.Errorf("%d leaves for %d lines of %d templates", m.Clusters(), len(lines), len(idTemplates))
	}
	t.Logf("%d lines: %d leaves, %d templates", len(lines), m.Clusters(), len(m.Templates()))
}

// Generated ids of one letter case with a digit inside are variables
// whatever their share of digits; names keep their digits at the end or
// mix cases, and short words are names.
func TestRandomID(t *testing.T) {
	for _, s := range []string{"jhbr550gavnq", "nektbwjybf5e", "1ycyzkqzjpijr", "3FXYZT3YRNNWY", "qm3oc4cf2fjh"} {
		if !randomID(s) || !variable(s) {
			t.Errorf("%q is not a variable", s)
		}
	}
	for _, s := range []string{"partition12", "worker12345", "ubuntu2204", "sha256", "log4j", "Log4jLoggerFactory", "Http2ServerConnection", "gtxnazjqtbfw"} {
		if randomID(s) {
			t.Errorf("randomID(%q) = true", s)
		}
	}
}
