// Package skilltest holds helpers shared by the built-in skills' tests.
package skilltest

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// ScanFunc is the shape of logscan.Scan.
type ScanFunc = func(ctx context.Context, path string, opt logscan.Options, fn func(line int, text string) error) error

// PlainScan reads a plain text file the way logscan.Scan numbers lines
// ('\n' ends a line, a trailing '\r' is dropped). It stands in for the
// engine while the engine is not there.
func PlainScan(ctx context.Context, path string, _ logscan.Options, fn func(int, string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		if err := fn(n, strings.TrimSuffix(sc.Text(), "\r")); err != nil {
			if errors.Is(err, logscan.ErrStop) {
				return nil
			}
			return err
		}
	}
	return sc.Err()
}

// Scanner returns logscan.Scan when the engine works, and PlainScan
// otherwise (logged), so tests exercise the real engine once it lands.
func Scanner(t testing.TB) ScanFunc {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe.log")
	if err := os.WriteFile(p, []byte("2024-01-01 00:00:00 INFO probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := logscan.Scan(context.Background(), p, logscan.Options{}, func(int, string) error { return nil }); err != nil {
		t.Logf("log engine unavailable (%v); using the plain-text scanner", err)
		return PlainScan
	}
	return logscan.Scan
}

// Env returns an Env with the named testdata files attached.
func Env(t testing.TB, names ...string) skills.Env {
	t.Helper()
	env := skills.Env{SessionKey: "local:t1:c1:th1", Workspace: t.TempDir(), Tenant: "t1", Channel: "c1", User: "u1"}
	for _, n := range names {
		p, err := filepath.Abs(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		env.Files = append(env.Files, skills.File{Name: n, Path: p, Size: fi.Size()})
	}
	return env
}
