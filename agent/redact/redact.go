// Package redact removes secrets (tokens, passwords, keys, auth headers,
// private keys, passwords in connection strings) from text before it reaches
// a model prompt or a stored memory. Line structure is kept intact.
//
// Placeholder: the memory engineer replaces the body; String's signature is
// a contract.
package redact

// String returns s with secrets replaced by "[REDACTED]" and the number of
// replacements.
func String(s string) (string, int) { return s, 0 }
