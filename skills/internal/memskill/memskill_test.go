package memskill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

type store interface {
	Add(ctx context.Context, recs ...memory.Record) error
}

type nopStore struct{}

func (nopStore) Add(context.Context, ...memory.Record) error { return nil }

func TestNewBase(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBase[store]("probe-memory", nopStore{}, md)
	if err != nil {
		t.Fatalf("NewBase: %v", err)
	}
	if b.Spec().Name != "probe-memory" {
		t.Errorf("spec name = %q", b.Spec().Name)
	}
	if _, ok := b.Store().(nopStore); !ok {
		t.Errorf("Store() = %T; want the store given", b.Store())
	}

	var none store
	if _, err := NewBase("probe-memory", none, md); err == nil || err.Error() != "probe-memory: Config.Store is required" {
		t.Errorf("nil store: err = %v", err)
	}
	if _, err := NewBase[store]("probe-memory", nopStore{}, []byte("no front matter")); err == nil || !strings.HasPrefix(err.Error(), "probe-memory SKILL.md: ") {
		t.Errorf("bad SKILL.md: err = %v", err)
	}
}

func TestDecodeArgs(t *testing.T) {
	var a struct {
		Query string `json:"query"`
	}
	if _, ok := DecodeArgs(nil, &a, `{"query": "..."}`); !ok || a.Query != "" {
		t.Errorf("no arguments: ok=%v query=%q", ok, a.Query)
	}
	if _, ok := DecodeArgs([]byte(`{"query":"redis"}`), &a, `{"query": "..."}`); !ok || a.Query != "redis" {
		t.Errorf("object: ok=%v query=%q", ok, a.Query)
	}
	r, ok := DecodeArgs([]byte(`["redis"]`), &a, `{"query": "..."}`)
	if ok || r.Status != skills.StatusError || !strings.HasPrefix(r.Output, `arguments must be a JSON object like {"query": "..."}: `) {
		t.Errorf("array: ok=%v result=%+v", ok, r)
	}
}

func TestFail(t *testing.T) {
	for _, e := range []error{memory.ErrUnavailable, memory.ErrScope, memory.ErrInvalid} {
		r, err := Fail("probe", fmt.Errorf("store: %w", e))
		if err != nil || r.Status != skills.StatusError || r.Output == "" {
			t.Errorf("%v: result=%+v err=%v; want an error result", e, r, err)
		}
	}
	boom := errors.New("disk on fire")
	r, err := Fail("probe", boom)
	if !errors.Is(err, boom) || err.Error() != "probe: disk on fire" || r.Status != "" {
		t.Errorf("other error: result=%+v err=%v; want the Go error wrapped", r, err)
	}
}
