package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// readiness holds the checks behind /readyz. Safe for concurrent use.
type readiness struct {
	mu     sync.Mutex
	checks map[string]func(context.Context) error
}

func newReadiness() *readiness { return &readiness{checks: map[string]func(context.Context) error{}} }

// add registers a named check; it returns nil when that part is ready, or
// an error saying why not.
func (r *readiness) add(name string, check func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks[name] = check
}

// report runs every check with a short deadline.
func (r *readiness) report(ctx context.Context) (ready bool, status map[string]string) {
	r.mu.Lock()
	names := make([]string, 0, len(r.checks))
	for n := range r.checks {
		names = append(names, n)
	}
	checks := r.checks
	r.mu.Unlock()
	sort.Strings(names)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ready = true
	status = map[string]string{}
	for _, n := range names {
		if err := checks[n](ctx); err != nil {
			ready = false
			status[n] = err.Error()
		} else {
			status[n] = "ok"
		}
	}
	return ready, status
}

// opsRoutes registers /healthz (process alive), /readyz (platforms
// connected, stores reachable; 503 with the reasons when not) and /metrics.
func opsRoutes(mux *http.ServeMux, ready *readiness) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, status := ready.report(r.Context())
		code := http.StatusOK
		if !ok {
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": ok, "checks": status})
	})
	mux.Handle("GET /metrics", metrics.Handler())
}

// newLogger returns the process logger: JSON when w is not a terminal (a
// service, a container), text on a terminal, or as SLEUTH_LOG_FORMAT says.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "text" || (format == "auto" && isTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// cmdHealth checks a running sleuth's /healthz (the container health
// check: the image has no shell or curl).
func cmdHealth(ctx context.Context, stdout, stderr io.Writer) int {
	addr := newEnv(nil).str("SLEUTH_HTTP_ADDR", "127.0.0.1:8080")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth health: SLEUTH_HTTP_ADDR=%q: %v\n", addr, err)
		return 2
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth health: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "sleuth health: /healthz answered %s\n", resp.Status)
		return 1
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}
