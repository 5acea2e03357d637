package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// auditRecord is one line of the audit log. Arguments are redacted; outputs
// are recorded by size and hash only, never by content.
type auditRecord struct {
	Time         time.Time       `json:"time"`
	Session      string          `json:"session"`
	Step         int             `json:"step"`
	Action       string          `json:"action"` // call, answer, ask, fallback
	Skill        string          `json:"skill,omitempty"`
	CallID       string          `json:"call_id,omitempty"`
	Args         json.RawMessage `json:"arguments,omitempty"`
	Status       string          `json:"status"`
	ResultBytes  int             `json:"result_bytes"`
	ResultSHA256 string          `json:"result_sha256,omitempty"`
	Tokens       int             `json:"tokens"`
	DurationMS   int64           `json:"duration_ms"`
	Redactions   int             `json:"redactions"`
	Brain        string          `json:"brain,omitempty"`
	Fallback     string          `json:"fallback,omitempty"`
	Error        string          `json:"error,omitempty"`
}

// auditLog appends records to AuditDir/audit-YYYY-MM-DD.jsonl. Safe for
// concurrent use; each record is one write of one line.
type auditLog struct {
	dir string
	mu  sync.Mutex
	day string
	f   *os.File
}

func openAudit(dir string) (*auditLog, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("audit dir: %w", err)
	}
	return &auditLog{dir: dir}, nil
}

func (l *auditLog) write(rec auditRecord) {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	day := rec.Time.UTC().Format("2006-01-02")
	if l.f == nil || l.day != day {
		if l.f != nil {
			l.f.Close()
		}
		f, err := os.OpenFile(filepath.Join(l.dir, "audit-"+day+".jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
		if err != nil {
			l.f = nil
			return
		}
		l.f, l.day = f, day
	}
	_, _ = l.f.Write(b)
}

// Close closes the current file.
func (l *auditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
