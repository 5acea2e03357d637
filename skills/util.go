package skills

import (
	"fmt"
	"strings"
)

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
