package agent

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/sleuth-bot/sleuth/skills"
)

//go:embed agent_brain.md
var defaultPersona string

//go:embed prompts/*.md
var promptFS embed.FS

var prompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"join": strings.Join,
	"schema": func(s skills.Spec) string {
		b, _ := json.Marshal(schemaOf(s))
		return string(b)
	},
}).ParseFS(promptFS, "prompts/*.md"))

// Persona is the agent's identity, split by phase.
type Persona struct {
	Boundaries string // always
	Workflow   string // while planning
	Style      string // when writing the answer
}

// ParsePersona splits a persona document at its level-2 headings: a heading
// containing "workflow" starts the workflow part, one containing "style" the
// style part; everything else is identity and boundaries.
func ParsePersona(doc string) Persona {
	var p Persona
	cur := &p.Boundaries
	for _, line := range strings.SplitAfter(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			h := strings.ToLower(line)
			switch {
			case strings.Contains(h, "workflow"):
				cur = &p.Workflow
			case strings.Contains(h, "style"):
				cur = &p.Style
			default:
				cur = &p.Boundaries
			}
		}
		*cur += line
	}
	p.Boundaries = strings.TrimSpace(p.Boundaries)
	p.Workflow = strings.TrimSpace(p.Workflow)
	p.Style = strings.TrimSpace(p.Style)
	return p
}

// LoadPersona returns the persona in file, or the embedded one when file is
// empty.
func LoadPersona(file string) (Persona, error) {
	if file == "" {
		return ParsePersona(defaultPersona), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Persona{}, fmt.Errorf("persona file: %w", err)
	}
	p := ParsePersona(string(b))
	if p.Boundaries == "" && p.Workflow == "" && p.Style == "" {
		return Persona{}, fmt.Errorf("persona file %s is empty", file)
	}
	return p, nil
}

// For returns the persona text for a phase.
func (p Persona) For(ph Phase) string {
	parts := []string{p.Boundaries}
	switch ph {
	case PhasePlan:
		parts = append(parts, p.Workflow)
	default:
		parts = append(parts, p.Style)
	}
	var nonEmpty []string
	for _, s := range parts {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	return strings.Join(nonEmpty, "\n\n")
}

func render(name string, data any) string {
	var b bytes.Buffer
	if err := prompts.ExecuteTemplate(&b, name, data); err != nil {
		// The templates are embedded and covered by tests; a failure here
		// is a programming error.
		panic(fmt.Sprintf("render %s: %v", name, err))
	}
	return strings.TrimSpace(b.String())
}

// schemaOf returns the skill's parameter schema, or an empty object schema.
func schemaOf(s skills.Spec) map[string]any {
	if s.Parameters == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s.Parameters
}
