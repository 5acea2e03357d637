package memory

import (
	"fmt"
	"strings"
)

// ShortID is the first 8 characters of an id, what people and models see.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Line renders a record on one line for a model or a terminal:
// "[3f2a9c1e] channel · incident · 2025-11-12 · p3 — content (source: app.log L549, <link>)".
func (r Record) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s · %s · %s · p%d — %s", ShortID(r.ID), r.Scope, r.Type, r.CreatedAt.Format("2006-01-02"), r.Priority, r.Content)
	var src []string
	if r.Source.File != "" {
		if r.Source.Line > 0 {
			src = append(src, fmt.Sprintf("%s L%d", r.Source.File, r.Source.Line))
		} else {
			src = append(src, r.Source.File)
		}
	}
	if r.Source.Skill != "" {
		src = append(src, r.Source.Skill)
	}
	if r.Source.Link != "" {
		src = append(src, r.Source.Link)
	}
	if len(src) > 0 {
		b.WriteString(" (source: " + strings.Join(src, ", ") + ")")
	}
	return b.String()
}
