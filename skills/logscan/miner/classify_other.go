//go:build !amd64 || purego

package miner

// haveClassify: no vector classifier on this platform; skeletons take the
// byte-by-byte path.
const haveClassify = false

func classify(msg string, m *byteMasks) { panic("miner: classify without a vector unit") }
