//go:build !race

package logscan

const raceEnabled = false
