package skills

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const testSchemaMD = `---
name: read-log
description: Reads lines of an attached log.
parameters:
  type: object
  additionalProperties: false
  required: [file]
  properties:
    file: {type: string}
    line: {type: integer, minimum: 1}
    context: {type: integer, minimum: 0, maximum: 200, default: 10}
    regex: {type: boolean, default: false}
    level: {type: string, enum: [error, warn, info]}
    ratio: {type: number}
    tags: {type: array, items: {type: string}}
    lines: {type: array, items: {type: integer}, maxItems: 3}
    evidence:
      type: array
      items:
        type: object
        required: [line]
        properties:
          file: {type: string}
          line: {type: integer}
---
body
`

func TestValidateArgs(t *testing.T) {
	spec, err := ParseSpec([]byte(testSchemaMD))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    string   // normalised JSON, when valid
		wantErr []string // substrings of the error, when invalid
	}{
		{name: "defaults filled", in: `{"file":"a.log"}`, want: `{"context":10,"file":"a.log","regex":false}`},
		{name: "null is empty object", in: `null`, wantErr: []string{`missing required parameter "file" (string)`}},
		{name: "string to integer", in: `{"file":"a.log","line":"42"}`, want: `{"context":10,"file":"a.log","line":42,"regex":false}`},
		{name: "L-prefixed line", in: `{"file":"a.log","line":"L42"}`, want: `{"context":10,"file":"a.log","line":42,"regex":false}`},
		{name: "float integral to integer", in: `{"file":"a.log","line":42.0}`, want: `{"context":10,"file":"a.log","line":42,"regex":false}`},
		{name: "string to bool", in: `{"file":"a.log","regex":"true"}`, want: `{"context":10,"file":"a.log","regex":true}`},
		{name: "number to string", in: `{"file":42}`, want: `{"context":10,"file":"42","regex":false}`},
		{name: "string to number", in: `{"file":"a","ratio":"0.5"}`, want: `{"context":10,"file":"a","ratio":0.5,"regex":false}`},
		{name: "single value to array", in: `{"file":"a","tags":"x"}`, want: `{"context":10,"file":"a","regex":false,"tags":["x"]}`},
		{name: "array items coerced", in: `{"file":"a","lines":["1",2]}`, want: `{"context":10,"file":"a","lines":[1,2],"regex":false}`},
		{name: "stringified array", in: `{"file":"a","lines":"[1,2]"}`, want: `{"context":10,"file":"a","lines":[1,2],"regex":false}`},
		{name: "enum case-insensitive", in: `{"file":"a","level":"ERROR"}`, want: `{"context":10,"file":"a","level":"error","regex":false}`},
		{name: "stringified object", in: `"{\"file\":\"a\"}"`, want: `{"context":10,"file":"a","regex":false}`},
		{name: "null value means absent", in: `{"file":"a","line":null}`, want: `{"context":10,"file":"a","regex":false}`},
		{name: "nested objects", in: `{"file":"a","evidence":{"line":"7"}}`, want: `{"context":10,"evidence":[{"line":7}],"file":"a","regex":false}`},
		{name: "missing required", in: `{}`, wantErr: []string{`missing required parameter "file"`, "Expected parameters:", "file (string, required)"}},
		{name: "not an integer", in: `{"file":"a","line":"abc"}`, wantErr: []string{`parameter "line" must be integer ≥ 1, got "abc"`}},
		{name: "fraction is not an integer", in: `{"file":"a","line":4.5}`, wantErr: []string{`parameter "line" must be integer`}},
		{name: "below minimum", in: `{"file":"a","line":0}`, wantErr: []string{`parameter "line" must be ≥ 1, got 0`}},
		{name: "above maximum", in: `{"file":"a","context":500}`, wantErr: []string{`parameter "context" must be ≤ 200, got 500`}},
		{name: "enum", in: `{"file":"a","level":"fatal"}`, wantErr: []string{`parameter "level" must be one of "error", "warn", "info", got "fatal"`}},
		{name: "bad bool", in: `{"file":"a","regex":"maybe"}`, wantErr: []string{`parameter "regex" must be boolean`}},
		{name: "unknown parameter", in: `{"file":"a","pattern":"x"}`, wantErr: []string{`unknown parameter "pattern"`, "known: context, evidence"}},
		{name: "too many items", in: `{"file":"a","lines":[1,2,3,4]}`, wantErr: []string{`"lines" takes at most 3 items, got 4`}},
		{name: "nested required", in: `{"file":"a","evidence":[{"file":"a"}]}`, wantErr: []string{`missing required parameter "evidence[0].line"`}},
		{name: "object for string", in: `{"file":{"x":1}}`, wantErr: []string{`parameter "file" must be string, got an object`}},
		{name: "not JSON", in: `{"file":`, wantErr: []string{"not valid JSON"}},
		{name: "array root", in: `[1]`, wantErr: []string{"must be a JSON object, got an array of 1 items"}},
		{name: "two problems at once", in: `{"line":"x"}`, wantErr: []string{`missing required parameter "file"`, `parameter "line" must be integer`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ValidateArgs(spec, json.RawMessage(tc.in))
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				if !errors.Is(err, ErrInvalidArgs) {
					t.Errorf("error %v does not wrap ErrInvalidArgs", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestValidateArgsNoSchema(t *testing.T) {
	got, err := ValidateArgs(Spec{Name: "x"}, json.RawMessage(`{"a":1,"b":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"a":1,"b":"c"}` {
		t.Errorf("got %s", got)
	}
	if got, err := ValidateArgs(Spec{Name: "x"}, nil); err != nil || string(got) != `{}` {
		t.Errorf("empty args: got %s, %v", got, err)
	}
}

func TestSchemaHint(t *testing.T) {
	spec, err := ParseSpec([]byte(testSchemaMD))
	if err != nil {
		t.Fatal(err)
	}
	h := SchemaHint(spec.Parameters)
	for _, w := range []string{"file (string, required)", "line (integer ≥ 1)", `level (one of "error", "warn", "info")`, "tags (array of string)"} {
		if !strings.Contains(h, w) {
			t.Errorf("hint %q lacks %q", h, w)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	spec, err := ParseSpec([]byte(testSchemaMD))
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		File string `json:"file"`
		Line int    `json:"line"`
	}
	if _, ok := DecodeArgs(spec, json.RawMessage(`{"file":"a.log","line":3}`), &a); !ok || a.File != "a.log" || a.Line != 3 {
		t.Errorf("decoded %+v", a)
	}
	r, ok := DecodeArgs(spec, json.RawMessage(`{"line":"x"}`), &a)
	if ok || r.Status != StatusError || !strings.Contains(r.Output, "Expected parameters: ") || !strings.Contains(r.Output, "file (string, required)") {
		t.Errorf("bad args: %v %+v", ok, r)
	}
	if _, ok := DecodeArgs(spec, nil, &a); !ok {
		t.Error("no args must decode to the zero value")
	}
}
