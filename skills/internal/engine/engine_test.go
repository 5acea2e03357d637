package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

func TestInputError(t *testing.T) {
	r, ok := InputError("read", "core.bin", fmt.Errorf("open core.bin: %w", logscan.ErrBinary))
	if !ok || r.Status != skills.StatusError || !strings.Contains(r.Output, "cannot read core.bin: the file looks binary") {
		t.Errorf("%v %+v", ok, r)
	}
	if _, ok := InputError("read", "x", errors.New("disk on fire")); ok {
		t.Error("an infrastructure error taken for an input error")
	}
}

func TestCut(t *testing.T) {
	if got := Cut("héllo wörld", 5); got != "héllo…[+6 chars]" {
		t.Errorf("got %q", got)
	}
	if got := Cut("short", 5); got != "short" {
		t.Errorf("got %q", got)
	}
}
