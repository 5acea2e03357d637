package logscan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChangeLine(t *testing.T) {
	for _, msg := range []string{
		`runtime config updated key=payouts.bank_timeout new=2s old=20s`,
		`Toggle 'checkout.tax-engine-v2' changed: enabled=false -> true`,
		`{"key":"db/max_open_conns","old":"40","new":"4","message":"dynamic config updated"}`,
		`ALTER SYSTEM SET db_recovery_file_dest_size=120G SCOPE=BOTH;`,
		`PAUSE command issued`,
		`admin issued server command: /stop`,
		`Reconfiguring Squid Cache (version 5.7)...`,
		`rate limit for tenant acme lowered from 500 to 50 requests/s`,
		`applied new connection pool settings`,
		`statement: GRANT SELECT ON orders TO reporting`,
		`updating [cluster.routing.allocation.enable] from [all] to [none]`,
		`[INFO] Changing max_connections for server 10:mysql-shop-01:3306 (mysql-shop-01:3306) from 2000 (2000) to 20`,
		`["set global var"] [conn=2103548] [name=tidb_mem_quota_query] [val=107374182]`,
		`UI_CFG_AUDIT_SET: User 'k.weber' set: [protocols bgp group TRANSIT-B neighbor 198.18.44.1 family inet unicast prefix-limit maximum] "1200000" -> "105000"`,
		`Query	SET GLOBAL innodb_buffer_pool_size = 134217728`,
	} {
		if !changeLine(msg) {
			t.Errorf("%q is a change", msg)
		}
	}
	for _, msg := range []string{
		`Cluster health status changed from [GREEN] to [YELLOW]`,
		`Executed DbCommand (2ms) CommandType='Text', CommandTimeout='30'`,
		`GET /api/orders/1234 200 in 12 ms`,
		`configuration loaded from /etc/app/config.yaml`,
		`partition assignment changed for group orders`,
		`DELETE /v1/orders/7781 status=200`,
		`cache set for global key session:42`,
		`BFD session 198.51.100.6 state changed: Up -> Down`,
	} {
		if changeLine(msg) {
			t.Errorf("%q is no change", msg)
		}
	}
}

// TestLastChange: a setting changed just before the errors is shown, though
// its template was printed harmlessly before and has no failure word; a
// setting reloaded every few minutes is routine, and one read at start-up
// is configuration.
func TestLastChange(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 8, 0, 0, 0, time.UTC), step: 5 * time.Second, layout: "2006-01-02T15:04:05Z", format: "time=\"%s\" level=%s msg=%s\n"}
	emit := lg.emit
	cause, reload, startup := 0, 0, 0
	for i := range 1500 {
		switch {
		case i == 3:
			emit("info", `"runtime config updated" key=payouts.bank_timeout new=20s old=30s`)
			startup = lg.line
		case i == 400:
			emit("info", `"runtime config updated" key=log.level new=info old=debug`)
		case i == 1079: // the same operation as the next line
			lg.step = 0
			emit("info", `"runtime config file changed, reloading" path=/etc/payouts/runtime.yaml`)
			reload = lg.line
			lg.step = 5 * time.Second
		case i == 1080: // a routine reload comes between it and the errors
			emit("info", `"runtime config updated" key=payouts.bank_timeout new=2s old=20s`)
			cause = lg.line
		case i == 1081: // the operation's last line, which says no value
			emit("info", `"runtime config applied" keys=1`)
		case i%40 == 11:
			emit("info", fmt.Sprintf(`"routing rules reloaded" rules=%d`, 2300+i%9))
		case i > 1110 && i%4 == 0:
			emit("error", fmt.Sprintf(`"payout batch submission failed" batch_id=pb_%d error="context deadline exceeded"`, i))
		case i > 1110 && i%4 == 2:
			emit("warning", fmt.Sprintf(`"bank api request failed, retrying" attempt=%d`, 1+i%3))
		case i%97 == 5:
			emit("error", fmt.Sprintf(`"request failed" path=/v1/payouts/%d status=404`, i))
		default:
			emit("info", fmt.Sprintf(`"request served" path=/v1/payouts/%d status=200 took=%dms`, i, 10+i%40))
		}
	}
	rep := analyzeText(t, "payouts.log", lg.b.String(), 5)
	found := map[int]bool{}
	for _, e := range rep.Evidence {
		if e.Line == cause || e.Line == reload {
			found[e.Line] = true
			if !strings.Contains(e.Reason, "the last change before the errors") {
				t.Errorf("L%d reason %q, want the last change before the errors", e.Line, e.Reason)
			}
		}
		if strings.Contains(e.Text, "rules reloaded") || e.Line == startup {
			t.Errorf("L%d is evidence (%q): a routine reload or a start-up setting", e.Line, e.Reason)
		}
	}
	if !found[cause] || !found[reload] {
		t.Errorf("the change at L%d and its operation's first line L%d: in the top 5 %v, want both; %+v", cause, reload, found, rep.Evidence)
	}
}

// TestChangeBeforeWarnings: a log that never errs and warns too little for
// an incident (Aerospike's "breached stop-writes limit" after a
// config-set halved a namespace) still shows the last change before its
// first warning that is not background.
func TestChangeBeforeWarnings(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 9, 0, 0, 0, time.UTC), step: 7 * time.Second, layout: "2006-01-02T15:04:05Z", format: "time=\"%s\" level=%s msg=%s\n"}
	cause := 0
	for i := range 600 {
		switch {
		case i == 300:
			lg.emit("info", `"changing value of memory-size of ns sessions from 51539607552 to 25769803776"`)
			cause = lg.line
		case i%50 == 7: // a peer that is always unreachable: background
			lg.emit("warning", `"error while connecting to peer 10.0.4.9:3002"`)
		case i == 420 || i == 470 || i == 520 || i == 570:
			lg.emit("warning", `"{sessions} breached stop-writes limit, rejecting writes"`)
		default:
			lg.emit("info", fmt.Sprintf(`"ticker: objects=%d evicted=0"`, 100000+i))
		}
	}
	rep := analyzeText(t, "asd.log", lg.b.String(), 5)
	if reason, ok := reasonOf(rep, cause); !ok {
		t.Errorf("the change at L%d is not in the top 5: %+v", cause, rep.Evidence)
	} else if !strings.Contains(reason, "the last change before") {
		t.Errorf("L%d reason %q, want the last change before the warnings", cause, reason)
	}
}

// TestForetold: a warning in the words of the errors to come, long before
// them, foretold the incident; a warning that shares only the words every
// failure has did not.
func TestForetold(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 8, 0, 0, 0, time.UTC), step: 5 * time.Second, layout: "2006-01-02T15:04:05Z", format: "time=\"%s\" level=%s msg=%s\n"}
	emit := lg.emit
	warned, generic := 0, 0
	for i := range 1500 {
		switch {
		case i == 700:
			emit("warning", `"hikari pool orders-db nearly drained" active=38 maxPoolSize=40`)
			warned = lg.line
		case i == 760:
			emit("warning", `"request failed, will retry" attempt=1`)
			generic = lg.line
		case i > 1100 && i%3 == 0:
			emit("error", fmt.Sprintf(`"hikari pool orders-db drained, request rejected" waited=%dms maxPoolSize=40`, 30000+i))
		case i%97 == 5:
			emit("error", fmt.Sprintf(`"request failed" path=/v1/orders/%d status=404`, i))
		default:
			emit("info", fmt.Sprintf(`"request served" path=/v1/orders/%d status=200 took=%dms`, i, 10+i%40))
		}
	}
	rep := analyzeText(t, "orders.log", lg.b.String(), 5)
	found := false
	for _, e := range rep.Evidence {
		if e.Line == warned {
			found = strings.Contains(e.Reason, "warned of the errors at L")
		}
		if e.Line == generic && strings.Contains(e.Reason, "warned of") {
			t.Errorf("L%d shares only generic words with the errors: %q", e.Line, e.Reason)
		}
	}
	if !found {
		t.Errorf("the warning at L%d that foretold the errors is not in the top 5 with its reason: %+v", warned, rep.Evidence)
	}
	if ws := templateWords(`msg="hikari pool orders-db drained" waited=<*>ms x=12 <*>`); !slices.Equal(ws, []string{"hikari", "pool", "orders-db", "drained", "waited"}) {
		t.Errorf("templateWords = %q", ws)
	}
}

// TestSettingDrift: a configuration line printed again at a reload or
// restart with another value for one of its settings is a change.
func TestSettingDrift(t *testing.T) {
	for _, c := range []struct{ then, now, want string }{
		{"DHCPv4 server has completed configuration: added IPv4 subnets: 6; DDNS: disabled", "DHCPv4 server has completed configuration: added IPv4 subnets: 5; DDNS: disabled", "subnets: 6 → 5"},
		{`Memory limiter configured	{"kind": "processor", "limit_mib": 6553, "check_interval": 1}`, `Memory limiter configured	{"kind": "processor", "limit_mib": 400, "check_interval": 1}`, "limit_mib: 6553 → 400"},
		// times, ids, durations and dates differ between any two prints
		{"ts=2024-06-03T09:20:01Z pid=17 took=35ms config loaded from=2024-01-01", "ts=2024-06-03T09:58:33Z pid=4242 took=91ms config loaded from=2024-04-01", ""},
		{"config reloaded trace_id=4bf92f3577b34da6a3ce929d0e0e4736 workers=8", "config reloaded trace_id=00f067aa0ba902b7a3ce929d0e0e4736 workers=8", ""},
	} {
		if got := settingDrift(c.then, c.now); got != c.want {
			t.Errorf("settingDrift(%q, %q) = %q, want %q", c.then, c.now, got, c.want)
		}
	}
	lg := &timedLog{ts: time.Date(2024, 5, 14, 10, 0, 0, 0, time.UTC), step: 4 * time.Second, layout: "2006-01-02 15:04:05.000", format: "%s %-5s [kea-dhcp4] %s\n"}
	reload, stats := 0, 0
	for i := range 700 {
		switch {
		case i == 3 || i == 400:
			lg.emit("INFO", fmt.Sprintf("DHCP4_CONFIG_COMPLETE DHCPv4 server has completed configuration: added IPv4 subnets: %d; DDNS: disabled", 6-i/400))
			if i == 400 {
				reload = lg.line
			}
		case i == 5 || i == 395:
			// a statistics line with other numbers: no configuration
			lg.emit("INFO", fmt.Sprintf("DHCP4_STATS leases assigned=%d declined=%d", 100+i, i%7))
			stats = lg.line
		case i > 430 && i%3 == 0:
			lg.emit("WARN", fmt.Sprintf("DHCP4_PACKET_NAK_0001 [hwtype=1 00:1a:2b:3c:%02x:%02x], cid=[no info], tid=0x%x: failed to allocate an IPv4 address in any subnet", i%256, i%199, 0x5a000+i))
		default:
			lg.emit("INFO", fmt.Sprintf("DHCP4_LEASE_ALLOC [hwtype=1 00:1a:2b:3c:%02x:%02x], tid=0x%x: lease 10.20.%d.%d has been allocated", i%256, i%199, 0x1000+i, i%4, 10+i%200))
		}
	}
	rep := analyzeText(t, "kea.log", lg.b.String(), 5)
	if why, ok := reasonOf(rep, stats); ok && strings.Contains(why, "→") {
		t.Errorf("a statistics line read as a changed setting: %q", why)
	}
	if why, ok := reasonOf(rep, reload); !ok || !strings.Contains(why, "subnets: 6 → 5 (L") {
		t.Errorf("the reload at L%d that dropped a subnet is not in the top 5 as a changed setting: %+v", reload, rep.Evidence)
	}
}

// TestLongConfigDrift: a service that prints its whole configuration on
// one long line at each start (ExternalDNS's "config: {…}") restarted
// with one setting changed far into that line; a soft error that was
// retried came and went before it, and the errors came after it. The
// second start's configuration line is shown with what changed.
func TestLongConfigDrift(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 12, 0, 0, 0, time.UTC), step: 20 * time.Second, layout: "2006-01-02T15:04:05Z", format: "time=\"%s\" level=%s msg=%s\n"}
	config := func(registry string) string {
		var b strings.Builder
		b.WriteString(`"config: {`)
		for k := range 150 { // some 2.5 KB of settings before the one that changes
			fmt.Fprintf(&b, "Setting%03d:value%03d ", k, k)
		}
		fmt.Fprintf(&b, `Registry:%s TXTPrefix: Interval:1m0s}"`, registry)
		return b.String()
	}
	cause := 0
	for i := range 400 {
		switch {
		case i == 0:
			lg.emit("info", config("txt"))
		case i == 60 || i == 61:
			lg.emit("error", `"failed to list records: Throttling: Rate exceeded, will retry"`)
		case i == 200:
			lg.emit("info", config("noop"))
			cause = lg.line
		case i > 200 && i%7 == 0:
			lg.emit("info", fmt.Sprintf(`"Desired change: DELETE host%d.example.com A"`, i))
		case i == 390:
			lg.emit("error", `"Failure in zone example.com when submitting change batch: record not found"`)
		default:
			lg.emit("info", `"All records are already up to date"`)
		}
	}
	rep := analyzeText(t, "edns.log", lg.b.String(), 5)
	if reason, ok := reasonOf(rep, cause); !ok {
		t.Errorf("the second start's configuration at L%d is not in the top 5: %+v", cause, rep.Evidence)
	} else if !strings.Contains(reason, "Registry: txt → noop") {
		t.Errorf("L%d reason %q, want the changed setting", cause, reason)
	}
}
