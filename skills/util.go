package skills

import (
	"fmt"
	"strings"
)

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
