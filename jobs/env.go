package jobs

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Settings are the jobs settings read from the environment.
type Settings struct {
	// JobsFile is SLEUTH_JOBS_FILE: the YAML definitions ("" for none).
	JobsFile string
	// ReportPaths is SLEUTH_REPORT_PATHS: comma-separated absolute globs
	// log-report jobs may read.
	ReportPaths []string
	// OwnerTarget is SLEUTH_OWNER_CHANNEL: where failure notices go.
	OwnerTarget string
	// Grace is SLEUTH_JOBS_GRACE (a duration; "off" disables catch-up).
	Grace time.Duration
}

// ReadEnv reads the jobs settings; lookup nil means os.LookupEnv. Bad
// values are returned as one error naming the variable.
func ReadEnv(lookup func(string) (string, bool)) (Settings, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	s := Settings{JobsFile: get("SLEUTH_JOBS_FILE"), OwnerTarget: get("SLEUTH_OWNER_CHANNEL")}
	for _, p := range strings.Split(get("SLEUTH_REPORT_PATHS"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			s.ReportPaths = append(s.ReportPaths, p)
		}
	}
	if s.OwnerTarget != "" {
		if _, err := ParseTarget(s.OwnerTarget); err != nil {
			return s, fmt.Errorf("SLEUTH_OWNER_CHANNEL: %w", err)
		}
	}
	switch g := get("SLEUTH_JOBS_GRACE"); g {
	case "":
	case "off", "0":
		s.Grace = -1
	default:
		d, err := parseDays(g)
		if err != nil {
			return s, fmt.Errorf("SLEUTH_JOBS_GRACE: %w", err)
		}
		s.Grace = d
	}
	return s, nil
}
