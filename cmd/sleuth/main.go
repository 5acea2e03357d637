// Command sleuth is a chat-ops agent for Slack and Feishu/Lark that reads
// log files and explains what went wrong. main only wires packages.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "sleuth: under construction")
}
