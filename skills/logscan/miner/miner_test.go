package miner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func mineAll(msgs []string) []Template {
	m := New()
	ids := make([]int, len(msgs))
	for i, s := range msgs {
		ids[i] = m.Add(s)
	}
	m.Finish()
	out := make([]Template, len(msgs))
	for i, id := range ids {
		out[i] = m.Template(id)
	}
	return out
}

func TestMaskTemplates(t *testing.T) {
	cases := []struct{ in, want string }{
		{"PacketResponder 1 for block blk_-6952295868487656571 terminating", "PacketResponder <*> for block <*> terminating"},
		{"Received block blk_123 of size 67108864 from /10.251.42.84", "Received block <*> of size <*> from <*>"},
		{"10.251.73.220:50010 is added", "<*> is added"},
		{"GET https://example.com/a/b?x=1 took 12ms", "GET <*> took <*>"},
		{"open /var/log/app.log failed", "open <*> failed"},
		{"request 550e8400-e29b-41d4-a716-446655440000 done", "request <*> done"},
		{"uid=0 euid=0 user=root", "uid=<*> euid=<*> user=root"},
		{"setLightsOn(true)", "setLightsOn(<*>)"},
		{"connection from 1.2.3.4 () at Sun Jul 10 04:15:25 2005", "connection from <*> (<*>) at <*>"},
		{"tag=\"View Lock\", name=x", "tag=\"<*>\", name=x"},
		{"steps = 1514038440000##6993##548365", "steps = <*>"},
		{"hash 9f86d081884c7d659a2feaa0c55ad015 ok", "hash <*> ok"},
		{"freed 18.4 KB in 0.5s", "freed <*> KB in <*>"},
	}
	for _, c := range cases {
		got := mineAll([]string{c.in})[0].Text
		if got != c.want {
			t.Errorf("%q\n got  %q\n want %q", c.in, got, c.want)
		}
	}
}

func TestMinerClusters(t *testing.T) {
	msgs := []string{
		"Invalid user webmaster from 1.2.3.4",
		"Invalid user test from 5.6.7.8",
		"Invalid user admin from 9.9.9.9",
		"session opened for user root by (uid=0)",
		"session closed for user root",
		"cupsd startup succeeded",
		"cupsd shutdown succeeded",
	}
	ts := mineAll(msgs)
	if ts[0].ID != ts[1].ID || ts[1].ID != ts[2].ID {
		t.Errorf("usernames not generalised: %q %q %q", ts[0].Text, ts[1].Text, ts[2].Text)
	}
	if ts[0].Text != "Invalid user <*> from <*>" {
		t.Errorf("template %q", ts[0].Text)
	}
	if ts[3].ID == ts[4].ID || ts[5].ID == ts[6].ID {
		t.Errorf("distinct events merged: %q / %q / %q", ts[3].Text, ts[4].Text, ts[5].Text)
	}
}

// A word that says something failed is never generalised against another:
// "Ping failed" and "Ping succeeded" are two events though they differ in
// two of eleven words, while the gateway's name is a variable.
func TestMinerFailureWordConstant(t *testing.T) {
	ts := mineAll([]string{
		"sofia.c:2440 Ping succeeded carrier-a with code 200 - count 1/1/3, state UP",
		"sofia.c:2440 Ping succeeded didnet with code 200 - count 1/1/3, state UP",
		"sofia.c:2426 Ping failed carrier-a with code 503 - count 1/2/3, state UP",
		"sofia.c:2426 Ping failed didnet with code 408 - count 1/2/3, state UP",
	})
	if ts[0].ID != ts[1].ID || ts[2].ID != ts[3].ID {
		t.Errorf("gateway names not generalised: %q %q / %q %q", ts[0].Text, ts[1].Text, ts[2].Text, ts[3].Text)
	}
	if ts[0].ID == ts[2].ID {
		t.Errorf("failed and succeeded merged into %q", ts[0].Text)
	}
	for _, c := range []struct {
		tok  string
		want bool
	}{{"failed", true}, {"(Failed)", true}, {"TIMEOUT:", true}, {"down", true}, {"succeeded", false}, {"fail2ban", false}, {"errors_total", false}} {
		if got := failureWord(c.tok); got != c.want {
			t.Errorf("failureWord(%q) = %v", c.tok, got)
		}
	}
}

// A state and its reverse are two templates ("alarm set" and "alarm
// cleared": a RabbitMQ log whose memory alarm was set twice had both under
// one template, and the alarm ranked nowhere); other words in their place
// still generalise.
func TestMinerStateWords(t *testing.T) {
	ts := mineAll([]string{
		"memory resource limit alarm set on node 'rabbit@mq-1'.",
		"memory resource limit alarm cleared on node 'rabbit@mq-1'",
		"memory resource limit alarm set on node 'rabbit@mq-2'.",
		"pam_unix(sshd:session): session opened for user alice",
		"pam_unix(sshd:session): session closed for user alice",
		"pam_unix(sshd:session): session opened for user bob",
		"worker w1 finished job in queue high",
		"worker w2 finished job in queue low",
		"worker w3 finished job in queue bulk",
	})
	if ts[0].ID == ts[1].ID || ts[3].ID == ts[4].ID {
		t.Errorf("a state and its reverse merged: %q, %q", ts[1].Text, ts[4].Text)
	}
	if ts[0].ID != ts[2].ID || ts[3].ID != ts[5].ID {
		t.Errorf("the same state not one template: %q %q, %q %q", ts[0].Text, ts[2].Text, ts[3].Text, ts[5].Text)
	}
	if ts[6].ID != ts[7].ID || ts[7].ID != ts[8].ID {
		t.Errorf("other words not generalised: %q %q %q", ts[6].Text, ts[7].Text, ts[8].Text)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{"set", "cleared", true}, {"UP", "down.", true}, {"(opened)", "closed", true}, {"set", "raised", false}, {"started", "set", false}, {"high", "low", false}} {
		if got := opposites(c.a, c.b); got != c.want {
			t.Errorf("opposites(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// A trailing optional field must not split a template (cross-length merge).
func TestMinerCrossLengthMerge(t *testing.T) {
	ts := mineAll([]string{"upload done 12 files", "upload done 13 files (18.4 KB)", "upload done 14 files"})
	_ = ts
	a := mineAll([]string{"job 1 finished in 3s", "job 2 finished in 4s"})
	if a[0].ID != a[1].ID {
		t.Errorf("same shape split: %q %q", a[0].Text, a[1].Text)
	}
}

// A constant that held across many shapes is trusted: "Failed password"
// does not absorb "Failed none".
func TestMinerMatureConstant(t *testing.T) {
	var msgs []string
	for i := 0; i < 20; i++ {
		msgs = append(msgs, fmt.Sprintf("Failed password for invalid user u%c%c from 1.2.3.%d port %d ssh2", 'a'+i, 'b'+i, i, 1000+i))
	}
	msgs = append(msgs, "Failed none for invalid user 0 from 5.188.10.180 port 49811 ssh2")
	ts := mineAll(msgs)
	if ts[0].ID != ts[19].ID {
		t.Fatalf("usernames split: %q vs %q", ts[0].Text, ts[19].Text)
	}
	if ts[20].ID == ts[0].ID {
		t.Errorf("'Failed none' absorbed into %q", ts[0].Text)
	}
}

func TestTemplateIDStable(t *testing.T) {
	a := mineAll([]string{"disk 91% full on /dev/sda1"})
	b := mineAll([]string{"something else", "disk 42% full on /dev/sdb2"})
	if a[0].ID != b[1].ID || a[0].ID != TemplateID(a[0].Text) {
		t.Errorf("ids differ across miners: %v %v", a[0], b[1])
	}
	if len(a[0].ID) != 12 {
		t.Errorf("id %q: want 12 hex chars", a[0].ID)
	}
}

// Adversarial input: every message a new shape. Clusters stay capped and
// every Add still returns a usable number.
func TestMinerBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	m := New()
	words := []string{"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"}
	var last int
	for i := 0; i < MaxClusters+5000; i++ {
		var b strings.Builder
		n := i
		for k := 0; k < 6; k++ {
			b.WriteString(words[n%8])
			b.WriteString(string(rune('a' + n%26)))
			b.WriteByte(' ')
			n /= 7
		}
		last = m.Add(b.String())
	}
	if len(m.clusters) > MaxClusters+1 {
		t.Errorf("%d clusters, cap %d", len(m.clusters), MaxClusters)
	}
	m.Finish()
	if m.Template(last).Text == "" {
		t.Error("empty template past the cap")
	}
}

func TestMinerEmptyAndHuge(t *testing.T) {
	m := New()
	a := m.Add("")
	b := m.Add(strings.Repeat("x1 ", 100000))
	m.Finish()
	if m.Template(a).ID == "" || m.Template(b).ID == "" {
		t.Error("missing templates")
	}
	if len(m.Template(b).Text) > maxMsgBytes+10 {
		t.Errorf("huge template %d bytes", len(m.Template(b).Text))
	}
	if (m.Template(-1) != Template{}) || (m.Template(99) != Template{}) {
		t.Error("out-of-range cluster must give the zero Template")
	}
}

func TestAddAllocs(t *testing.T) {
	f := Learn([]string{"2024-01-02 03:04:05.123 INFO 1 --- [main] c.e.Api : GET /v1/x status=200 in 12ms"})
	m := New()
	line := "2024-01-02 03:04:05.123 INFO 1 --- [main] c.e.Api : GET /v1/x status=200 in 12ms"
	m.Add(f.Parse(line).Msg(line))
	n := testing.AllocsPerRun(100, func() {
		h := f.Parse(line)
		m.Add(h.Msg(line))
	})
	if n != 0 {
		t.Errorf("%v allocs per line on a known shape, want 0", n)
	}
}

// Every message a new shape: the skeleton cache turns itself off after a
// window of misses, and results stay those of a miner that masks every
// line.
func TestSkeletonBypass(t *testing.T) {
	msgs := nameLines(3*skelWindow, 3*skelWindow)
	m := New()
	ids := make([]int, len(msgs))
	for i, s := range msgs {
		ids[i] = m.Add(s)
	}
	if m.skel.off == 0 {
		t.Fatal("cache still on after windows of misses")
	}
	m.Finish()
	ref := New()
	for i, s := range msgs {
		id, _ := ref.addMasked(s)
		if id != int32(ids[i]) {
			t.Fatalf("line %d: cluster %d, masking every line gives %d", i, ids[i], id)
		}
	}
	ref.Finish()
	if a, b := m.Template(ids[0]), ref.Template(ids[0]); a != b {
		t.Errorf("template %v, want %v", a, b)
	}
}

// A skeleton enters the cache on its second sighting: shapes seen once
// (fresh base-36 ids, whose letters keep their class in the skeleton) cost
// no cache entry.
func TestSkeletonDoorkeeper(t *testing.T) {
	m := New()
	for i := 0; i < 1000; i++ {
		// letters only: the masker keeps the word (a base-36 id with
		// digits is a variable), so every line is a new shape
		id := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'q' + r - '0'
			}
			return r
		}, strconv.FormatUint(uint64(i)*0x9e3779b97f4a7c15, 36))
		m.Add(fmt.Sprintf("user %s logged in", id))
	}
	once := len(m.skel.entries)
	m.Add("job 1 done")
	m.Add("job 2 done")
	m.Add("job 3 done")
	if len(m.skel.entries) > once+1 {
		t.Errorf("%d entries after one repeated shape, want at most %d", len(m.skel.entries), once+1)
	}
	if once > skelDoorFree+200 {
		t.Errorf("%d cache entries for 1000 one-off shapes", once)
	}
	if m.skel.seen == nil {
		t.Error("no second-sighting table past the free entries")
	}
	one := New()
	one.Add("job 1 done")
	if one.skel.seen != nil {
		t.Error("a one-line miner allocated the second-sighting table")
	}
}

// Words the masker replaces whole (hex ids of any length and letter
// pattern, IP:port, paths and URLs with digits) share one skeleton byte,
// so messages that differ only in them hit the cache and get the leaf
// masking gives them.
func TestSkeletonWholeVariables(t *testing.T) {
	msgs := []string{
		"user d8c42b2dfcfb864 from 10.0.0.7:8080 read /var/log/app-1.log",
		"user 3f9a01c7e2 from 192.168.1.20:80 read /srv/data/x9/part-00017",
		"user 4b825dc642cb6eb9a060e54bf8d69288fbee4904 from 127.0.0.1:65535 read ./tmp/7",
	}
	var keys []string
	for _, msg := range msgs {
		k, _, ok := skeleton(nil, nil, msg)
		if !ok {
			t.Fatalf("%q: not cacheable", msg)
		}
		keys = append(keys, string(k))
	}
	if keys[0] != keys[1] || keys[1] != keys[2] {
		t.Fatalf("skeletons differ:\n%q\n%q\n%q", keys[0], keys[1], keys[2])
	}
	m, ref := New(), New()
	var hits int
	for round := 0; round < 3; round++ {
		for _, msg := range msgs {
			k, w, _ := skeleton(nil, nil, msg)
			if _, ok := m.skel.lookup(k, w, msg); ok {
				hits++
			}
			if got, want := m.Add(msg), ref.addNoCache(msg); got != want {
				t.Fatalf("%q: leaf %d, masking gives %d", msg, got, want)
			}
		}
	}
	if hits == 0 {
		t.Fatal("no message hit the cache")
	}
	// A literal skelVar byte makes a message uncacheable rather than
	// equal to one with an id in its place.
	if _, _, ok := skeleton(nil, nil, "user \xff from 10.0.0.7:8080 read /var/log/app-1.log"); ok {
		t.Fatal("a message holding the placeholder byte is cacheable")
	}
}

// addNoCache is Add without the skeleton cache.
func (m *Miner) addNoCache(msg string) int {
	id, _ := m.addMasked(msg)
	return int(id)
}

// TestSwarStop: every byte value, in every position of the word and next
// to every kind of neighbour, is marked exactly when copyPlain must look
// at it alone.
func TestSwarStop(t *testing.T) {
	for _, fill := range []byte{'a', '0', '=', 0x80, 0xff, ' ', '/', 0x7f} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var w [8]byte
				for j := range w {
					w[j] = fill
				}
				w[pos] = byte(c)
				stop := swarStop(load64(string(w[:]), 0))
				for j, b := range w {
					want := isDigit(b) || b == '=' || b >= 0x80
					if got := stop>>(8*j+7)&1 == 1; got != want {
						t.Fatalf("%q: byte %d (%#x) marked %v, want %v", w, j, b, got, want)
					}
				}
			}
		}
	}
}
