package miner

import (
	"testing"
	"time"
)

// Each case is a small file of one format: Learn on the lines, then Parse
// the first one.
func TestHeaderFormats(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		time  string
		level string
		comp  string
		msg   string
	}{
		{"iso T zone", []string{"2024-01-02T03:04:05.678Z ERROR db: connection refused", "2024-01-02T03:04:06.001Z INFO db: ok"},
			"2024-01-02T03:04:05.678Z", LevelError, "db", "connection refused"},
		{"iso space comma python", []string{"2024-01-02 03:04:05,123 - app.worker - WARNING - disk 91% full", "2024-01-02 03:04:06,000 - app.worker - INFO - ok"},
			"2024-01-02 03:04:05,123", LevelWarn, "app.worker", "disk 91% full"},
		{"spring boot", []string{"2026-11-28 09:58:00.468  INFO 1 --- [main] c.e.payments.PaymentsApplication : Starting PaymentsApplication v3.8.2", "2026-11-28 09:58:01.359 ERROR 1 --- [http-1] c.e.Api : boom"},
			"2026-11-28 09:58:00.468", LevelInfo, "c.e.payments.PaymentsApplication", "Starting PaymentsApplication v3.8.2"},
		{"syslog", []string{"Nov 29 10:00:01 web1 sshd[123]: Accepted password for bob", "Nov 29 10:00:02 web1 cron[9]: job done"},
			"Nov 29 10:00:01", "", "sshd[123]", "Accepted password for bob"},
		{"hdfs", []string{"081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_38865049064139660 terminating", "081109 203807 222 WARN dfs.DataNode: x"},
			"081109 203615", LevelInfo, "dfs.DataNode$PacketResponder", "PacketResponder 1 for block blk_38865049064139660 terminating"},
		{"android threadtime", []string{"03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogs", "03-17 16:13:38.819  1702  8671 E PowerManagerService: acquire"},
			"03-17 16:13:38.811", LevelDebug, "WindowManager", "printFreezingDisplayLogs"},
		{"android brief", []string{"E/ActivityManager( 1702): ANR in com.example", "I/Foo: hi"},
			"", LevelError, "E/ActivityManager( 1702)", "ANR in com.example"},
		{"healthapp pipes", []string{"20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", "20171223-22:16:0:119|Step_LSC|30002312|x"},
			"20171223-22:15:29:606", "", "Step_LSC", "onStandStepChanged 3579"},
		{"apache error", []string{"[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", "[Sun Dec 04 04:47:45 2005] [notice] ok"},
			"Sun Dec 04 04:47:44 2005", LevelError, "", "mod_jk child workerEnv in error state 6"},
		{"bracketed iso", []string{"[2024-01-01 12:00:00] [warn] low memory", "[2024-01-01 12:00:01] [info] fine"},
			"2024-01-01 12:00:00", LevelWarn, "", "low memory"},
		{"esp-idf", []string{"W (322) sensor_gw: frame 3 bad crc", "I (23) cpu_start: Multicore app"},
			"322", LevelWarn, "sensor_gw", "frame 3 bad crc"},
		{"epoch seconds", []string{"1700000000.123 worker started", "1700000001.000 worker stopped"},
			"1700000000.123", "", "", "worker started"},
		{"epoch millis", []string{"1700000000123 INFO worker started", "1700000001000 INFO worker stopped"},
			"1700000000123", LevelInfo, "", "worker started"},
		{"syslog priority", []string{"<3>Nov 29 10:00:01 host kernel: oops", "<6>Nov 29 10:00:02 host kernel: fine"},
			"Nov 29 10:00:01", LevelError, "kernel", "oops"},
		{"logfmt", []string{`time=2024-01-01T00:00:00Z level=error msg="db down" retries=3`, `time=2024-01-01T00:00:01Z level=info msg="ok"`},
			"2024-01-01T00:00:00Z", LevelError, "", `"db down" retries=3`},
		{"go log", []string{"2024/01/02 15:04:05 listening on :8080", "2024/01/02 15:04:06 shutting down"},
			"2024/01/02 15:04:05", "", "", "listening on :8080"},
		{"dotnet", []string{"2024-01-02 15:04:05.123 +00:00 [ERR] Unhandled exception in Api", "2024-01-02 15:04:06.000 +00:00 [INF] ok"},
			"2024-01-02 15:04:05.123 +00:00", LevelError, "", "Unhandled exception in Api"},
		{"kernel uptime", []string{"[   12.345678] usb 1-1: new device", "[   13.000001] eth0: link up"},
			"12.345678", "", "usb 1-1", "new device"},
		{"java log4j", []string{"2024-01-02 15:04:05,123 ERROR [pool-1-thread-2] com.acme.Job: failed to run", "2024-01-02 15:04:06,000 INFO [main] com.acme.App: started"},
			"2024-01-02 15:04:05,123", LevelError, "com.acme.Job", "failed to run"},
		{"zabbix pid-padded", []string{"  2047:20240529:085755.556 cannot send list of active checks to \"10.30.4.71\"", " 52919:20240529:102340.231 server #3 started [alert manager #1]"},
			"20240529:085755.556", "", "", `cannot send list of active checks to "10.30.4.71"`},
		{"tidb unified: a quoted message in brackets ends the header", []string{`[2024/06/11 10:06:42.309 +00:00] [INFO] [set.go:164] ["set global var"] [conn=2103548] [name=tidb_mem_quota_query] [val=107374182]`,
			`[2024/06/11 10:09:29.177 +00:00] [INFO] [row_container.go:371] ["memory exceeds quota, spill to disk now."] [consumed=107438780] [quota=107374182]`,
			`[2024/06/11 10:09:31.002 +00:00] [WARN] [expensivequery.go:118] [expensive_query] [cost_time=60.028s]`},
			"2024/06/11 10:06:42.309 +00:00", LevelInfo, "", `["set global var"] [conn=2103548] [name=tidb_mem_quota_query] [val=107374182]`},
		{"freeswitch: a session uuid before the time, idle cpu after it", []string{
			`c782923a-335e-44bf-bcbe-5b9ed060a62b 2024-03-12 11:00:23.118340 96.84% [NOTICE] switch_channel.c:1142 New Channel sofia/internal/1007@pbx.acme.local`,
			`2024-03-12 11:31:09.414699 96.62% [WARNING] sofia.c:2426 Ping failed carrier-a with code 503 - count 1/2/3, state UP`,
			`c782923a-335e-44bf-bcbe-5b9ed060a62b 2024-03-12 11:00:23.119030 96.58% [INFO] sofia.c:10460 receiving invite`,
			`860c4fac-dac1-4fe4-9251-f8919f515ca5 2024-03-12 11:32:32.442131 96.85% [ERR] switch_ivr_originate.c:2855 Cannot create outgoing channel`},
			"2024-03-12 11:00:23.118340", LevelInfo, "", `switch_channel.c:1142 New Channel sofia/internal/1007@pbx.acme.local`},
		{"logfmt among the lines of another layout", []string{
			`ts=2024-01-30T08:31:41.220417Z lvl=warn msg="max-values-per-tag limit may be exceeded soon" log_id=0mXq3Zkl000 service=store`,
			`[httpd] 10.20.5.21 - telegraf [30/Jan/2024:08:13:14 +0000] "POST /write?db=telegraf HTTP/1.1" 204 0 "-" "Telegraf/1.29.2"`,
			`[httpd] 10.20.5.22 - telegraf [30/Jan/2024:08:13:19 +0000] "POST /write?db=telegraf HTTP/1.1" 204 0 "-" "Telegraf/1.29.2"`},
			"2024-01-30T08:31:41.220417Z", LevelWarn, "", `"max-values-per-tag limit may be exceeded soon" log_id=0mXq3Zkl000 service=store`},
		{"no header", []string{"hello world", "another line here"},
			"", "", "", "hello world"},
		{"nginx access (no header: whole line is the message)", []string{`10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326`, `10.0.0.2 - - [10/Oct/2000:13:55:37 -0700] "GET /b HTTP/1.1" 404 0`},
			"", "", "", `10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 2326`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Learn(c.lines)
			h := f.Parse(c.lines[0])
			if h.Time != c.time || h.Level != c.level || h.Component != c.comp || h.Msg(c.lines[0]) != c.msg {
				t.Errorf("layout %q: got time=%q level=%q comp=%q msg=%q; want %q %q %q %q",
					f.Layout(), h.Time, h.Level, h.Component, h.Msg(c.lines[0]), c.time, c.level, c.comp, c.msg)
			}
			if c.time != "" && h.UnixMS == 0 {
				t.Errorf("UnixMS not set for %q", h.Time)
			}
		})
	}
}

func TestHeaderJSON(t *testing.T) {
	lines := []string{
		`{"time":"2024-01-01T00:00:00Z","level":"error","logger":"db","msg":"connection refused","retries":3}`,
		`{"log":"I0101 ready\n","stream":"stderr","time":"2024-01-01T00:00:01.5Z"}`,
		`{"ts":1700000000.5,"level":50,"message":"boom","nested":{"msg":"inner"}}`,
	}
	f := Learn(lines)
	if f.Layout() != "json" {
		t.Fatalf("layout %q, want json", f.Layout())
	}
	want := []struct{ msg, level, comp string }{
		{"connection refused", LevelError, "db"},
		{`I0101 ready\n`, "", ""},
		{"boom", LevelError, ""},
	}
	for i, l := range lines {
		h := f.Parse(l)
		if h.Msg(l) != want[i].msg || h.Level != want[i].level || h.Component != want[i].comp {
			t.Errorf("line %d: msg=%q level=%q comp=%q, want %+v", i, h.Msg(l), h.Level, h.Component, want[i])
		}
	}
}

func TestHeaderUnixMS(t *testing.T) {
	f := Learn([]string{"2024-01-02T03:04:05.678+02:00 INFO x: y", "2024-01-02T03:04:06Z INFO x: y"})
	h := f.Parse("2024-01-02T03:04:05.678+02:00 INFO x: y")
	if want := int64(1704157445678); h.UnixMS != want {
		t.Errorf("UnixMS=%d want %d", h.UnixMS, want)
	}
}

// In a file whose headers are indented (a right-aligned pid before the
// timestamp) an indented line without a timestamp is still a
// continuation; in any other file an indented timestamp is one too.
func TestHeaderPadded(t *testing.T) {
	f := Learn([]string{"  2011:20240529:100923.512 __zbx_mem_malloc(): out of memory (requested 48 bytes)",
		"  2011:20240529:100923.513 === Backtrace: ===", "  2011:20240529:100923.514 zabbix_server [2011]: ERROR [file:dbconfig.c,line:1392]"})
	if h := f.Parse("  2011:20240529:100923.512 x"); h.Time != "20240529:100923.512" || h.UnixMS == 0 {
		t.Errorf("padded header: time %q (%d)", h.Time, h.UnixMS)
	}
	if h := f.Parse("        at com.acme.Job.run(Job.java:12)"); h.Time != "" || h.MsgStart != 0 {
		t.Errorf("indented frame: %+v, want no header", h)
	}
	g := Learn([]string{"2024-01-02 03:04:05 ERROR boom", "2024-01-02 03:04:06 INFO ok", "    2024-01-02 03:04:07 quoted output"})
	if h := g.Parse("    2024-01-02 03:04:07 quoted output"); h.Time != "" {
		t.Errorf("indented timestamp in an unpadded file: time %q, want a continuation", h.Time)
	}
}

// Continuation lines of a headed file are all message.
func TestHeaderContinuation(t *testing.T) {
	f := Learn([]string{"2024-01-02 03:04:05 ERROR boom", "2024-01-02 03:04:06 INFO ok"})
	for _, l := range []string{"\tat com.acme.Foo.bar(Foo.java:12)", "Caused by: java.io.IOException: x", ""} {
		if h := f.Parse(l); h.MsgStart != 0 || h.Time != "" {
			t.Errorf("%q: got %+v, want no header", l, h)
		}
	}
}

// unixMS must agree with time.Date, day overflow included.
func TestUnixMSMatchesTimeDate(t *testing.T) {
	for _, y := range []int{1, 1600, 1899, 1970, 1999, 2000, 2004, 2024, 2100, 2286, 9999} {
		for m := 1; m <= 12; m++ {
			for d := 1; d <= 31; d++ {
				want := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).UnixMilli() + 12345
				if got := unixMS(y, m, d, 12345); got != want {
					t.Fatalf("%04d-%02d-%02d: %d, want %d", y, m, d, got, want)
				}
			}
		}
	}
}

// clockRef is clock's general loop alone; clock's HH:MM:SS fast path must
// agree with it on every input.
func clockRef(s string, i int) (int, int64, bool) {
	var f [3]int
	j := i
	for k := 0; k < 3; k++ {
		e := runDigits(s, j)
		if e-j < 1 || e-j > 2 {
			return 0, 0, false
		}
		f[k], _ = digits(s, j, e-j)
		j = e
		if k < 2 {
			if j >= len(s) || s[j] != ':' {
				return 0, 0, false
			}
			j++
		}
	}
	if f[0] > 24 || f[1] > 59 || f[2] > 60 {
		return 0, 0, false
	}
	e, ms, _ := clock("00:00:00"+s[j:], 0) // the fraction part, shared
	return j + e - 8, int64(f[0])*3600000 + int64(f[1])*60000 + int64(f[2])*1000 + ms, true
}

func TestClockFastPath(t *testing.T) {
	const alpha = "0123456789:.9"
	x := uint64(88172645463325252)
	for n := 0; n < 200000; n++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b := make([]byte, 6+x%9)
		for k := range b {
			b[k] = alpha[(x>>(k*4))%uint64(len(alpha))]
		}
		if x%3 == 0 && len(b) >= 8 {
			b[2], b[5] = ':', ':'
		}
		s := string(b)
		e1, v1, ok1 := clock(s, 0)
		e2, v2, ok2 := clockRef(s, 0)
		if e1 != e2 || v1 != v2 || ok1 != ok2 {
			t.Fatalf("%q: clock %d %d %v, reference %d %d %v", s, e1, v1, ok1, e2, v2, ok2)
		}
	}
}
