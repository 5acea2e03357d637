//go:build !race

package feishu

const raceEnabled = false
