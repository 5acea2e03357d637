package slack

import (
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
)

// testBotToken is the token the fake Slack serves downloads to.
const testBotToken = slacktest.BotToken

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
