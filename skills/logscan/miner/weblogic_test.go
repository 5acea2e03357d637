package miner

import "testing"

// TestParseWebLogic reads WebLogic's fields: the time as written with the
// raw milliseconds, the severity, the subsystem, and the message from its
// id on; nested brackets in a field ("<<WLS Kernel>>") do not end it. The
// older ten-field format has no context id or supplemental attributes.
func TestParseWebLogic(t *testing.T) {
	cur := "####<Jun 3, 2024, 2:11:27,263 AM Coordinated Universal Time> <Warning> <JDBC> <host1> <ms1> " +
		"<[ACTIVE] ExecuteThread: '8' for queue: 'weblogic.kernel.Default (self-tuning)'> <<WLS Kernel>> <> " +
		"<a91c7e34-00000451> <1717380687263> <[severity-value: 16] [rid: 0] > <BEA-001129> <Received exception while creating connection"
	var h Header
	if !parseWebLogic(cur, &h) {
		t.Fatalf("not read: %q", cur)
	}
	if h.Time != "Jun 3, 2024, 2:11:27,263 AM Coordinated Universal Time" || h.UnixMS != 1717380687263 ||
		h.Level != LevelWarn || h.Component != "JDBC" || cur[h.MsgStart:] != "BEA-001129> <Received exception while creating connection" {
		t.Errorf("current format: %+v, message %q", h, cur[h.MsgStart:])
	}
	old := "####<Jun 3, 2024 2:11:27 AM UTC> <Error> <HTTP> <host1> <ms1> <ExecuteThread: '2'> <<WLS Kernel>> <> <1717380687000> <BEA-101020> <Servlet failed with an Exception>"
	h = Header{}
	if !parseWebLogic(old, &h) || h.UnixMS != 1717380687000 || h.Level != LevelError || old[h.MsgStart:] != "BEA-101020> <Servlet failed with an Exception>" {
		t.Errorf("older format: %+v", h)
	}
	for _, s := range []string{
		"#### a heading",
		"####<Jun 3, 2024> <Info> <x>",
		"<Jun 3, 2024 2:11:27 AM UTC> <Error> <HTTP> <BEA-101020> <no ####>",
		"####<" + string(make([]byte, 600)),
	} {
		h = Header{}
		if parseWebLogic(s, &h) {
			t.Errorf("read %q as WebLogic: %+v", s, h)
		}
	}
	// a sample of WebLogic records, most lines their further lines
	sample := []string{cur, "ORA-12514, TNS:listener does not currently know of service", " >", "\tat a.b.C.d(C.java:1)", "\tat a.b.C.e(C.java:2)", cur + ">"}
	if f := Learn(sample); !f.Marked() {
		t.Errorf("a WebLogic sample is not marked")
	}
	if f := Learn([]string{"2024-06-03 10:00:00 INFO a", "2024-06-03 10:00:01 INFO b"}); f.Marked() {
		t.Errorf("an ISO log is marked")
	}
}
