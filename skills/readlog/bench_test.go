package readlog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
)

// BenchmarkReadLog measures read-log over a 100,000-line file with the log
// engine's scanner: a keyword search, a level filter, and a line window.
func BenchmarkReadLog(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.log")
	var sb strings.Builder
	for i := range 100000 {
		lvl := "INFO "
		if i%1000 == 7 {
			lvl = "ERROR"
		}
		fmt.Fprintf(&sb, "2024-05-01 02:%02d:%02d.%03d %s [http-nio-8080-exec-%d] c.a.p.PaymentController - Processed payment %d in %dms\n", i/3600%60, i/60%60, i%1000, lvl, i%8, 4000+i, i%97)
	}
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	env := skills.Env{Files: []skills.File{{Name: "big.log", Path: p}}}
	for _, bc := range []struct{ name, args string }{
		{"keyword", `{"pattern":"payment 4007 "}`},
		{"level", `{"level":"error"}`},
		{"around", `{"line":50000,"context":10}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(sb.Len()))
			for b.Loop() {
				res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(bc.args), Env: env})
				if err != nil || res.Status != skills.StatusOK || len(res.Lines) == 0 {
					b.Fatalf("%v %s %s", err, res.Status, res.Output)
				}
			}
		})
	}
}
