package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		n    int
	}{
		{"plain text untouched", "2024-01-02 ERROR connection refused to db:5432", "2024-01-02 ERROR connection refused to db:5432", 0},
		{"bearer header", "Authorization: Bearer abc.def-ghi_123456", "Authorization: Bearer [REDACTED]", 1},
		{"basic header", "authorization=Basic dXNlcjpwYXNzd29yZA==", "authorization=Basic [REDACTED]", 1},
		{"bare bearer", `curl -H "Bearer 0123456789abcdef" http://x`, `curl -H "Bearer [REDACTED]" http://x`, 1},
		{"slack bot token", "using xoxb-1234567890-abcdefghij for workspace", "using [REDACTED] for workspace", 1},
		{"slack app token", "SLACK_APP xapp-1-A0123456789-abcdef", "SLACK_APP [REDACTED]", 1},
		{"github token", "push with ghp_abcdefghijklmnopqrstuvwxyz0123456789 failed", "push with [REDACTED] failed", 1},
		{"aws key id", "key AKIAIOSFODNN7EXAMPLE used", "key [REDACTED] used", 1},
		{"aws secret kv", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=[REDACTED]", 1},
		{"stripe", "charge failed sk_live_4eC39HqLyjWDarjtT1zdp7dc", "charge failed [REDACTED]", 1},
		{"openai", "OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz123", "OPENAI [REDACTED]", 1},
		{"jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok", "cookie [REDACTED] ok", 1},
		{"password kv", "login user=bob password=hunter2 ok", "login user=bob password=[REDACTED] ok", 1},
		{"json token", `{"api_key": "abcd1234efgh", "user": "bob"}`, `{"api_key": "[REDACTED]", "user": "bob"}`, 1},
		{"yaml secret", "client_secret: s3cr3tvalue", "client_secret: [REDACTED]", 1},
		{"postgres url", "dial postgres://app:pa55w0rd@db.internal:5432/prod failed", "dial postgres://app:[REDACTED]@db.internal:5432/prod failed", 1},
		{"token count kept", "usage prompt_tokens=512 completion_tokens: 40", "usage prompt_tokens=512 completion_tokens: 40", 0},
		{"placeholder kept", "password=***** token=null", "password=***** token=null", 0},
		{"already redacted", "password=[REDACTED]", "password=[REDACTED]", 0},
		{"two secrets", "password=a1b2c3d4 token=zzzzzzzz", "password=[REDACTED] token=[REDACTED]", 2},
		{"crlf kept", "password=abc\r\nnext", "password=[REDACTED]\r\nnext", 1},
		{
			"private key block",
			"before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdef\n-----END RSA PRIVATE KEY-----\nafter",
			"before\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n[REDACTED]\n-----END RSA PRIVATE KEY-----\nafter",
			1,
		},
		{
			"one-line key",
			`"key": "-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----\n"`,
			`"key": "-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\n"`,
			1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := String(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("String(%q)\n got %q, %d\nwant %q, %d", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

func TestRedactorTracksKeyBlockAcrossLines(t *testing.T) {
	var r Redactor
	lines := []string{"x", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "-----END OPENSSH PRIVATE KEY----- trailing token=abcdefgh", "y"}
	want := []string{"x", "-----BEGIN OPENSSH PRIVATE KEY-----", "[REDACTED]", "-----END OPENSSH PRIVATE KEY----- trailing token=[REDACTED]", "y"}
	for i, l := range lines {
		got, _ := r.Line(l)
		if got != want[i] {
			t.Errorf("line %d: got %q want %q", i, got, want[i])
		}
	}
	if r.InKey() {
		t.Error("still inside a key block after END")
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{
		"Authorization: Bearer abcdefghijk", "password=x\npassword=y", "postgres://u:p@h/db",
		"-----BEGIN PRIVATE KEY-----\nabc\n", "xoxb-123456789012-abc", "token: 12", "\r\n\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, n := String(s)
		if strings.Count(out, "\n") != strings.Count(s, "\n") {
			t.Fatalf("line count changed: %q -> %q", s, out)
		}
		if n == 0 && out != s {
			t.Fatalf("changed without counting: %q -> %q", s, out)
		}
		if n > 0 && !strings.Contains(out, Mask) {
			t.Fatalf("counted %d but no mask: %q -> %q", n, s, out)
		}
		again, _ := String(out)
		if again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}
