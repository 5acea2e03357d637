package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/bot/metrics"
)

func TestOpsEndpoints(t *testing.T) {
	ready := newReadiness()
	ready.add("database", func(context.Context) error { return nil })
	down := errors.New("qdrant: connection refused")
	ready.add("memory", func(context.Context) error { return down })
	mux := http.NewServeMux()
	opsRoutes(mux, ready)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"memory":"qdrant: connection refused"`) || !strings.Contains(body, `"database":"ok"`) {
		t.Errorf("/readyz = %d %s", code, body)
	}
	down = nil
	ready.add("memory", func(context.Context) error { return down })
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"ready":true`) {
		t.Errorf("/readyz once ready = %d %s", code, body)
	}

	metrics.EventsReceived.WithLabelValues("slack", "duplicate").Inc()
	metrics.JobRuns.WithLabelValues("daily-digest", "delivered").Inc()
	_, body = get("/metrics")
	for _, want := range []string{
		`sleuth_events_total{outcome="duplicate",platform="slack"}`,
		`sleuth_job_runs_total{job="daily-digest",outcome="delivered"}`,
		"sleuth_queue_depth", "go_goroutines", "process_resident_memory_bytes",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
