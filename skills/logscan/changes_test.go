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
