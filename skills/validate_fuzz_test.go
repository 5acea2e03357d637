package skills

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzValidateArgs feeds arbitrary model output to ValidateArgs: it must
// never panic, and what it accepts must be a JSON object that validates
// again to itself.
func FuzzValidateArgs(f *testing.F) {
	spec, err := ParseSpec([]byte(testSchemaMD))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{"file":"a.log","line":"42"}`, `null`, `"{\"file\":\"a\"}"`, `{"file":"a","evidence":[{"line":"7"}]}`, `[1,2]`, `{"file":1e400}`, `{"file":"a","lines":"[1,\"x\"]"}`, `{"file":"a","context":-0.0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := ValidateArgs(spec, json.RawMessage(raw))
		if err != nil {
			if !errors.Is(err, ErrInvalidArgs) {
				t.Fatalf("error %v does not wrap ErrInvalidArgs", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("accepted %q but produced %q: %v", raw, out, err)
		}
		again, err := ValidateArgs(spec, out)
		if err != nil {
			t.Fatalf("normalised %s does not validate: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not idempotent: %s then %s", out, again)
		}
	})
}
