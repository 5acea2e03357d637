package bot

import (
	"fmt"
	"strings"
)

// RenderText renders a reply as plain text for terminals, logs and
// platforms without rich formatting: the answer, then evidence lines as
// "L123 file: text", then next steps.
func RenderText(r Reply) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(r.Text))
	if len(r.Evidence) > 0 && !strings.Contains(r.Text, "Evidence") {
		b.WriteString("\n\nEvidence:")
		for _, e := range r.Evidence {
			mark := ""
			if !e.Verified {
				mark = " (unverified)"
			}
			fmt.Fprintf(&b, "\n  L%d %s: %s%s", e.Line, e.File, e.Text, mark)
		}
	}
	if len(r.NextSteps) > 0 && !strings.Contains(r.Text, "Next steps") {
		b.WriteString("\n\nNext steps:")
		for _, s := range r.NextSteps {
			b.WriteString("\n  - " + s)
		}
	}
	return b.String()
}
