//go:build race

package logscan

// raceEnabled is true under the race detector, which makes the engine
// about ten times slower: the tests that run it over whole sets of logs
// for what it finds, not for its concurrency, take a sample there.
const raceEnabled = true
