package slack

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/sleuth-bot/sleuth/bot"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRenderGolden(t *testing.T) {
	long := bot.Reply{Text: "**Many errors.**"}
	for i := 1; i <= 300; i++ {
		long.Evidence = append(long.Evidence, bot.Evidence{File: "big.log", Line: i * 10, Text: strings.Repeat("ERROR something broke ", 5), Verified: true})
	}
	cases := map[string]bot.Reply{
		"answer": {
			Text: "**Checkout failed** at 10:02 because the payment gateway timed out.\n\n- the pool was exhausted first\n- retries made it worse <see below> & more\n\nSee [the runbook](https://runbooks.example.com/pay) and `retry_max`.",
			Evidence: []bot.Evidence{
				{File: "app.log", Line: 1042, Text: "10:02:01 ERROR payment gateway timeout after 30s", Reason: "the failure", Verified: true},
				{File: "app.log", Line: 998, Text: "10:01:40 WARN pool exhausted (50/50)", Verified: true},
				{File: "gw.log", Line: 7, Text: "upstream ``` reset", Reason: "gateway side", Verified: false},
			},
			NextSteps: []string{"Raise the pool size", "Check **gateway** health"},
			Steps:     4, Tokens: 1234,
		},
		"failed":        {Text: "I could not read app.log: attachment exceeds the size limit", Failed: true},
		"inline_report": {Text: "Digest", Report: "# Daily digest\n- 3 incidents\n- 1 new error template", ReportName: "digest.md"},
		"truncated":     long,
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			out := renderReply(r)
			checkLimits(t, out.Blocks)
			type golden struct {
				Text    string        `json:"text"`
				Blocks  []slack.Block `json:"blocks"`
				Uploads []string      `json:"uploads,omitempty"`
			}
			g := golden{Text: out.Fallback, Blocks: out.Blocks}
			for _, u := range out.Uploads {
				g.Uploads = append(g.Uploads, fmt.Sprintf("%s (%d bytes)", u.Name, len(u.Content)))
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "render_"+name+".golden.json")
			if *update {
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
				t.Errorf("rendering differs from %s (go test -update to accept):\n%s", path, got)
			}
		})
	}
	if out := renderReply(long); len(out.Uploads) != 1 || !strings.Contains(out.Uploads[0].Content, "L3000") {
		t.Errorf("a truncated answer should upload the whole text, got %d uploads", len(out.Uploads))
	}
}

// checkLimits asserts Slack's message limits on rendered blocks.
func checkLimits(t *testing.T, blocks []slack.Block) {
	t.Helper()
	if len(blocks) > maxBlocks {
		t.Errorf("%d blocks, Slack allows %d", len(blocks), maxBlocks)
	}
	total := 0
	for _, b := range blocks {
		if s, ok := b.(*slack.SectionBlock); ok {
			if err := s.Text.Validate(); err != nil {
				t.Errorf("section invalid: %v", err)
			}
			n := len([]rune(s.Text.Text))
			total += n
			if n > maxSectionText {
				t.Errorf("section of %d chars", n)
			}
			if strings.Count(s.Text.Text, "```")%2 != 0 {
				t.Errorf("unbalanced code fence in section:\n%s", s.Text.Text)
			}
		}
	}
	if total > maxBlocksText {
		t.Errorf("blocks carry %d chars, over %d", total, maxBlocksText)
	}
}

func TestSplitMrkdwnKeepsFencesAndLimits(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("intro\n```\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "%d | ERROR line with ünïcode %d\n", i, i)
	}
	sb.WriteString("```\noutro " + strings.Repeat("é", 4000))
	chunks := splitMrkdwn(sb.String(), maxSectionText)
	if len(chunks) < 2 {
		t.Fatalf("got %d chunks", len(chunks))
	}
	joined := strings.Join(chunks, "")
	for _, c := range chunks {
		if len(c) > maxSectionText {
			t.Errorf("chunk of %d bytes", len(c))
		}
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("unbalanced fence in chunk starting %q", c[:20])
		}
		if !utf8.ValidString(c) {
			t.Errorf("chunk cut inside a rune")
		}
	}
	for _, want := range []string{"0 | ERROR", "499 | ERROR", "outro"} {
		if !strings.Contains(joined, want) {
			t.Errorf("lost %q", want)
		}
	}
}

func TestToMrkdwnAndStripMention(t *testing.T) {
	cases := map[string]string{
		"**bold** and `**code**`": "*bold* and `**code**`",
		"# Title":                 "*Title*",
		"- a\n  * b":              "• a\n  • b",
		"a < b & c > d":           "a &lt; b &amp; c &gt; d",
		"```\n**x** <y>\n```":     "```\n**x** &lt;y&gt;\n```",
		"[docs](https://x.io/a)":  "<https://x.io/a|docs>",
	}
	for in, want := range cases {
		if got := toMrkdwn(in); got != want {
			t.Errorf("toMrkdwn(%q) = %q, want %q", in, got, want)
		}
	}
	ad, _ := New(Config{BotToken: "xoxb-1", SigningSecret: "s", BotUserID: "UBOT"})
	strip := map[string]string{
		"<@UBOT> why?":               "why?",
		"hey <@UBOT|sleuth>  look":   "hey look",
		"<@UBOT> ask <@U2> about it": "ask <@U2> about it",
		"<@UBOT>\n```a  b```":        "```a  b```",
	}
	for in, want := range strip {
		if got := ad.stripMention(in); got != want {
			t.Errorf("stripMention(%q) = %q, want %q", in, got, want)
		}
	}
}
