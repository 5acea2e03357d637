package skills

import (
	"fmt"
	"strings"
)

// HumanBytes formats a byte count in binary units with at most one
// decimal, the way people read sizes in a reply: "512 bytes", "1.5 KiB",
// "25 MiB", "2.1 GiB". It lives here, beside the Result that carries such
// sizes, because the skills, the agent, the jobs and the CLI all import
// this package already.
func HumanBytes(n int64) string {
	units := []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	for _, u := range units {
		if n >= u.size {
			v := strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(u.size)), ".0")
			return v + " " + u.name
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
