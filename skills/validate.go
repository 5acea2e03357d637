package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalidArgs reports arguments that do not fit a skill's parameters.
// ValidateArgs wraps it in an *ArgsError whose message is a hint fit to show
// the model.
var ErrInvalidArgs = errors.New("invalid arguments")

// ArgsError lists what is wrong with a call's arguments.
type ArgsError struct {
	Skill    string
	Problems []string // one readable sentence per parameter
	Hint     string   // the expected shape, e.g. `file (string, required), line (integer ≥ 1)`
}

func (e *ArgsError) Error() string {
	var b strings.Builder
	if e.Skill != "" {
		fmt.Fprintf(&b, "arguments for %s: ", e.Skill)
	}
	b.WriteString(strings.Join(e.Problems, "; "))
	if e.Hint != "" {
		b.WriteString(". Expected parameters: ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalidArgs) true.
func (e *ArgsError) Unwrap() error { return ErrInvalidArgs }

// ValidateArgs checks raw against spec.Parameters and returns the
// arguments normalised: defaults filled in and values coerced to the
// declared type ("42"→42, "true"→true, 42→"42", a single value → [value],
// a JSON object sent as a string → the object). Empty or null raw is an
// empty object.
//
// It understands this JSON Schema subset: type (object, string, integer,
// number, boolean, array), properties, required, enum, minimum, maximum,
// minLength, maxLength, minItems, maxItems, default, items,
// additionalProperties: false. Other keywords are ignored. Errors are
// *ArgsError values naming each parameter and the shape it expects.
func ValidateArgs(spec Spec, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	var v any
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		v = map[string]any{}
	} else {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, &ArgsError{Skill: spec.Name, Problems: []string{"arguments are not valid JSON: " + err.Error()}, Hint: SchemaHint(spec.Parameters)}
		}
	}
	// Models sometimes send the arguments object as a JSON string.
	if s, ok := v.(string); ok {
		var inner any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if d.Decode(&inner) == nil {
			v = inner
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &ArgsError{Skill: spec.Name, Problems: []string{fmt.Sprintf("arguments must be a JSON object, got %s", describe(v))}, Hint: SchemaHint(spec.Parameters)}
	}
	schema := spec.Parameters
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	var problems []string
	out := coerce(v, schema, "", &problems)
	if len(problems) > 0 {
		return nil, &ArgsError{Skill: spec.Name, Problems: problems, Hint: SchemaHint(spec.Parameters)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshal arguments: %w", err)
	}
	return b, nil
}

// coerce returns v converted to schema's type, appending a problem for each
// value that cannot be converted. path names the parameter ("" for the
// root object).
func coerce(v any, schema map[string]any, path string, problems *[]string) any {
	typ, _ := schema["type"].(string)
	var out any
	var ok bool
	switch typ {
	case "object":
		out, ok = coerceObject(v, schema, path, problems)
		if !ok {
			return v
		}
		return out
	case "array":
		out, ok = coerceArray(v, schema, path, problems)
		if !ok {
			return v
		}
		return out
	case "string":
		out, ok = toString(v)
	case "integer":
		out, ok = toInteger(v)
	case "number":
		out, ok = toNumber(v)
	case "boolean":
		out, ok = toBool(v)
	default: // no type: any value
		out, ok = v, true
		if n, isNum := v.(json.Number); isNum {
			out = n
		}
	}
	if !ok {
		*problems = append(*problems, fmt.Sprintf("parameter %q must be %s, got %s", name(path), shape(schema), describe(v)))
		return v
	}
	if enum, has := schema["enum"].([]any); has {
		m, found := matchEnum(out, enum)
		if !found {
			*problems = append(*problems, fmt.Sprintf("parameter %q must be one of %s, got %s", name(path), enumList(enum), describe(v)))
			return v
		}
		out = m
	}
	checkBounds(out, schema, path, problems)
	return out
}

func coerceObject(v any, schema map[string]any, path string, problems *[]string) (map[string]any, bool) {
	if s, isStr := v.(string); isStr {
		var inner any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if d.Decode(&inner) == nil {
			v = inner
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		*problems = append(*problems, fmt.Sprintf("parameter %q must be an object, got %s", name(path), describe(v)))
		return nil, false
	}
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]any, len(obj))
	for k, x := range obj {
		ps, known := props[k].(map[string]any)
		if !known {
			if ap, set := schema["additionalProperties"].(bool); set && !ap {
				*problems = append(*problems, fmt.Sprintf("unknown parameter %q (known: %s)", join(path, k), strings.Join(sortedKeys(props), ", ")))
				continue
			}
			out[k] = x
			continue
		}
		if x == nil { // null means "not given"
			continue
		}
		out[k] = coerce(x, ps, join(path, k), problems)
	}
	for _, k := range sortedKeys(props) {
		if _, has := out[k]; has {
			continue
		}
		ps, _ := props[k].(map[string]any)
		if d, has := ps["default"]; has {
			out[k] = d
		}
	}
	if req, _ := schema["required"].([]any); len(req) > 0 {
		for _, r := range req {
			k, _ := r.(string)
			if _, has := out[k]; !has {
				ps, _ := props[k].(map[string]any)
				*problems = append(*problems, fmt.Sprintf("missing required parameter %q (%s)", join(path, k), shape(ps)))
			}
		}
	}
	return out, true
}

func coerceArray(v any, schema map[string]any, path string, problems *[]string) ([]any, bool) {
	if s, isStr := v.(string); isStr && strings.HasPrefix(strings.TrimSpace(s), "[") {
		var inner any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if d.Decode(&inner) == nil {
			v = inner
		}
	}
	arr, ok := v.([]any)
	if !ok {
		arr = []any{v} // a single value stands for a list of one
	}
	items, _ := schema["items"].(map[string]any)
	out := make([]any, len(arr))
	for i, x := range arr {
		if items == nil {
			out[i] = x
			continue
		}
		out[i] = coerce(x, items, fmt.Sprintf("%s[%d]", path, i), problems)
	}
	checkBounds(out, schema, path, problems)
	return out, true
}

func toString(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return nil, false
}

func toInteger(v any) (any, bool) {
	var f float64
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, true
		}
		x, err := t.Float64()
		if err != nil {
			return nil, false
		}
		f = x
	case float64:
		f = t
	case string:
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "L"))
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false
		}
		f = x
	default:
		return nil, false
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return nil, false
	}
	return int64(f), true
}

func toNumber(v any) (any, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case float64:
		return t, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		return f, true
	}
	return nil, false
}

func toBool(v any) (any, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "1", "on":
			return true, true
		case "false", "no", "0", "off":
			return false, true
		}
	case json.Number:
		switch t.String() {
		case "1":
			return true, true
		case "0":
			return false, true
		}
	}
	return nil, false
}

// matchEnum finds v among enum, comparing strings case-insensitively and
// numbers by value; it returns the enum's spelling.
func matchEnum(v any, enum []any) (any, bool) {
	for _, e := range enum {
		switch ev := e.(type) {
		case string:
			if s, ok := v.(string); ok && strings.EqualFold(strings.TrimSpace(s), ev) {
				return ev, true
			}
		case float64:
			if f, ok := asFloat(v); ok && f == ev {
				return v, true
			}
		case bool:
			if b, ok := v.(bool); ok && b == ev {
				return ev, true
			}
		}
	}
	return nil, false
}

func checkBounds(v any, schema map[string]any, path string, problems *[]string) {
	if f, ok := asFloat(v); ok {
		if min, has := asFloat(schema["minimum"]); has && f < min {
			*problems = append(*problems, fmt.Sprintf("parameter %q must be ≥ %s, got %s", name(path), num(min), num(f)))
		}
		if max, has := asFloat(schema["maximum"]); has && f > max {
			*problems = append(*problems, fmt.Sprintf("parameter %q must be ≤ %s, got %s", name(path), num(max), num(f)))
		}
	}
	if s, ok := v.(string); ok {
		n := len([]rune(s))
		if min, has := asFloat(schema["minLength"]); has && float64(n) < min {
			*problems = append(*problems, fmt.Sprintf("parameter %q must have at least %s characters", name(path), num(min)))
		}
		if max, has := asFloat(schema["maxLength"]); has && float64(n) > max {
			*problems = append(*problems, fmt.Sprintf("parameter %q must have at most %s characters, got %d", name(path), num(max), n))
		}
	}
	if a, ok := v.([]any); ok {
		if min, has := asFloat(schema["minItems"]); has && float64(len(a)) < min {
			*problems = append(*problems, fmt.Sprintf("parameter %q needs at least %s items", name(path), num(min)))
		}
		if max, has := asFloat(schema["maxItems"]); has && float64(len(a)) > max {
			*problems = append(*problems, fmt.Sprintf("parameter %q takes at most %s items, got %d", name(path), num(max), len(a)))
		}
	}
}

func asFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}

// SchemaHint renders a parameters schema as one line the model can follow:
// `file (string, required), line (integer, ≥ 1), level (one of "error", "warn")`.
func SchemaHint(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return "none"
	}
	required := map[string]bool{}
	if req, _ := schema["required"].([]any); req != nil {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	parts := make([]string, 0, len(props))
	for _, k := range sortedKeys(props) {
		ps, _ := props[k].(map[string]any)
		desc := shape(ps)
		if required[k] {
			desc += ", required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", k, desc))
	}
	return strings.Join(parts, ", ")
}

// shape describes what a schema accepts: "an integer ≥ 1", "one of …".
func shape(schema map[string]any) string {
	if schema == nil {
		return "any value"
	}
	if enum, ok := schema["enum"].([]any); ok {
		return "one of " + enumList(enum)
	}
	typ, _ := schema["type"].(string)
	s := typ
	switch typ {
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			s = "array of " + shape(items)
		}
	case "":
		s = "any value"
	}
	if min, ok := asFloat(schema["minimum"]); ok {
		s += " ≥ " + num(min)
	}
	if max, ok := asFloat(schema["maximum"]); ok {
		s += " ≤ " + num(max)
	}
	return s
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		return strconv.Quote(t)
	case json.Number:
		return "the number " + t.String()
	case bool:
		return "the boolean " + strconv.FormatBool(t)
	case []any:
		return fmt.Sprintf("an array of %d items", len(t))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func name(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
