package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/agent/llmtest"
)

func TestNarrateSendsDigestAsDataAndReturnsText(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Text: "  DB timeouts doubled; one thread is still open.  "})
	b := llmBrain(t, srv, "native")
	got, err := b.Narrate(context.Background(), "recurring: db timeout x12 (was 6)")
	if err != nil {
		t.Fatal(err)
	}
	if got != "DB timeouts doubled; one thread is still open." {
		t.Fatalf("narrative %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	if !strings.Contains(prompt, "<digest>\nrecurring: db timeout x12 (was 6)\n</digest>") || len(reqs[0].Tools) != 0 {
		t.Fatalf("prompt does not fence the digest or offers tools:\n%s", prompt)
	}
}

func TestNarrateReportsModelFailure(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{Status: 500, Text: "boom"})
	b := llmBrain(t, srv, "native")
	if _, err := b.Narrate(context.Background(), "x"); err == nil {
		t.Fatal("want an error from a failing model")
	}
}
