package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits of the Agent Skills format.
const (
	maxNameLen        = 64
	maxDescriptionLen = 1024
)

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ParseSpec reads a SKILL.md: YAML front matter between "---" lines, then
// the markdown body. It validates the spec (see Spec.Validate).
func ParseSpec(md []byte) (Spec, error) {
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	md = bytes.ReplaceAll(md, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(md, []byte("---\n")) {
		return Spec{}, errors.New("SKILL.md must start with a '---' front matter line")
	}
	rest := md[4:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return Spec{}, errors.New("SKILL.md front matter has no closing '---' line")
	}
	var s Spec
	if err := yaml.Unmarshal(rest[:end], &s); err != nil {
		return Spec{}, fmt.Errorf("SKILL.md front matter: %w", err)
	}
	body := rest[end+4:]
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = nil
	}
	s.Body = strings.TrimSpace(string(body))
	if s.Parameters != nil {
		s.Parameters = normalizeYAML(s.Parameters).(map[string]any)
	}
	return s, s.Validate()
}

// Validate checks the Agent Skills rules and sleuth's fields.
func (s Spec) Validate() error {
	var errs []error
	switch {
	case s.Name == "":
		errs = append(errs, errors.New("name is required"))
	case len(s.Name) > maxNameLen:
		errs = append(errs, fmt.Errorf("name %q is longer than %d characters", s.Name, maxNameLen))
	case !nameRE.MatchString(s.Name):
		errs = append(errs, fmt.Errorf("name %q must be lowercase letters, digits and single hyphens", s.Name))
	}
	switch {
	case strings.TrimSpace(s.Description) == "":
		errs = append(errs, errors.New("description is required"))
	case len(s.Description) > maxDescriptionLen:
		errs = append(errs, fmt.Errorf("description is %d characters; the limit is %d", len(s.Description), maxDescriptionLen))
	}
	if s.Parameters != nil {
		if t, _ := s.Parameters["type"].(string); t != "object" {
			errs = append(errs, errors.New(`parameters must be a JSON Schema with "type": "object"`))
		}
	}
	return errors.Join(errs...)
}

// normalizeYAML turns map[string]interface{} trees from yaml.v3 into the
// shapes encoding/json produces, so schemas compare and marshal alike.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case nil:
		return map[string]any(nil)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalizeYAMLValue(x)
		}
		return out
	default:
		return map[string]any(nil)
	}
}

func normalizeYAMLValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return normalizeYAML(t)
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = normalizeYAMLValue(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalizeYAMLValue(x)
		}
		return out
	case int:
		return float64(t)
	default:
		return v
	}
}
