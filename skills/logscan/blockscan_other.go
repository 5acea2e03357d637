//go:build !amd64 || purego

package logscan

// scanFlags returns s's blockFlags.
func scanFlags(s string) uint8 { return scanFlagsGeneric(s) }
