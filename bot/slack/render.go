package slack

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/sleuth-bot/sleuth/bot"
)

// Slack's message limits. Rendering stays inside them and says so when it
// cuts; the full answer then goes up as a file.
const (
	// maxBlocks is the block count limit of one message
	// (docs.slack.dev/reference/block-kit/blocks: 50 in messages).
	maxBlocks = 50
	// maxSectionText is the limit of a section's text object
	// (docs.slack.dev/reference/block-kit/blocks/section-block: 3,000
	// characters; slack-go's block_object.go validates it).
	maxSectionText = 3000
	// maxBlocksText keeps the total text of all blocks below the
	// undocumented msg_blocks_too_long threshold, observed around 13.2k
	// characters (bolt-js issue #2509).
	maxBlocksText = 12000
	// maxFallbackText bounds the top-level text, which Slack shows in
	// notifications (Slack truncates text after 40,000 characters,
	// changelog 2018-04-truncating-really-long-messages).
	maxFallbackText = 3000
	// maxInlineReport is the longest report shown in the message itself;
	// longer ones are uploaded as a file.
	maxInlineReport = 2500
	// maxEvidenceLine cuts one cited log line; the file keeps the rest.
	maxEvidenceLine = 400
	// maxStatusText bounds the assistant thread status line.
	maxStatusText = 150
)

// Names of reactions and files the adapter uses.
const (
	reactionSeen   = "eyes"
	reactionDone   = "white_check_mark"
	reactionFailed = "x"
	defaultReport  = "sleuth-report.md"
	answerFile     = "sleuth-answer.md"
)

// upload is a file to put into the thread after the message.
type upload struct {
	Name    string
	Title   string
	Content string
}

// rendered is a Reply laid out for Slack.
type rendered struct {
	Blocks   []slack.Block
	Fallback string
	// Uploads go into the thread after the message: a long report, or the
	// whole answer when the blocks had to be cut.
	Uploads []upload
}

// renderReply lays r out as Block Kit within Slack's limits.
func renderReply(r bot.Reply) rendered {
	var b blockBuilder
	text := strings.TrimSpace(r.Text)
	if text == "" {
		text = "(no answer)"
	}
	if r.Failed {
		text = ":x: " + text
	}
	b.sections(toMrkdwn(text))

	if len(r.Evidence) > 0 {
		b.sections(renderEvidence(r.Evidence))
	}
	if len(r.NextSteps) > 0 {
		var sb strings.Builder
		sb.WriteString("*Next steps*")
		for _, s := range r.NextSteps {
			sb.WriteString("\n• ")
			sb.WriteString(toMrkdwn(strings.TrimSpace(s)))
		}
		b.sections(sb.String())
	}

	var out rendered
	report := strings.TrimSpace(r.Report)
	if report != "" {
		name := firstNonEmpty(safeFileName(r.ReportName), defaultReport)
		if len(report) <= maxInlineReport && b.fits(len(report)+40, 2) {
			b.add(slack.NewDividerBlock(), 0)
			b.sections(toMrkdwn(report))
		} else {
			out.Uploads = append(out.Uploads, upload{Name: name, Title: "sleuth report", Content: r.Report})
			b.context(fmt.Sprintf(":page_facing_up: Full report attached below as `%s`.", escape(name)))
		}
	}
	if r.Steps > 0 || r.Tokens > 0 {
		var parts []string
		if r.Steps > 0 {
			parts = append(parts, plural(r.Steps, "step"))
		}
		if r.Tokens > 0 {
			parts = append(parts, plural(r.Tokens, "token"))
		}
		b.context("sleuth · " + strings.Join(parts, " · "))
	}
	if b.truncated {
		out.Uploads = append(out.Uploads, upload{Name: answerFile, Title: "sleuth answer (full)", Content: plainAnswer(r)})
	}
	out.Blocks = b.finish()
	out.Fallback = cut(toMrkdwn(strings.TrimSpace(r.Text)), maxFallbackText)
	if out.Fallback == "" {
		out.Fallback = "(no answer)"
	}
	return out
}

// renderEvidence lays out cited lines grouped by file, each group as a
// code block with line numbers, then the reasons.
func renderEvidence(ev []bot.Evidence) string {
	var sb strings.Builder
	sb.WriteString("*Evidence*")
	for i := 0; i < len(ev); {
		file := ev[i].File
		j := i
		for j < len(ev) && ev[j].File == file {
			j++
		}
		group := ev[i:j]
		width := 1
		for _, e := range group {
			width = max(width, len(fmt.Sprint(e.Line)))
		}
		fmt.Fprintf(&sb, "\n`%s`\n```\n", escape(codeSafe(firstNonEmpty(file, "log"))))
		for _, e := range group {
			fmt.Fprintf(&sb, "%*d | %s\n", width, e.Line, escape(codeSafe(cut(strings.TrimRight(e.Text, "\r\n"), maxEvidenceLine))))
		}
		sb.WriteString("```")
		for _, e := range group {
			if e.Reason == "" && e.Verified {
				continue
			}
			fmt.Fprintf(&sb, "\n• L%d", e.Line)
			if e.Reason != "" {
				sb.WriteString(" — " + toMrkdwn(e.Reason))
			}
			if !e.Verified {
				sb.WriteString(" _(not verified)_")
			}
		}
		i = j
	}
	return sb.String()
}

// blockBuilder appends blocks while keeping the message inside maxBlocks
// and maxBlocksText; once something does not fit it adds one note and
// ignores the rest (truncated).
type blockBuilder struct {
	blocks    []slack.Block
	textLen   int
	truncated bool
}

// reserve keeps room for the truncation note and the footer blocks.
const reserveBlocks, reserveText = 3, 400

func (b *blockBuilder) fits(textLen, blocks int) bool {
	return len(b.blocks)+blocks <= maxBlocks-reserveBlocks && b.textLen+textLen <= maxBlocksText-reserveText
}

func (b *blockBuilder) add(bl slack.Block, textLen int) {
	b.blocks = append(b.blocks, bl)
	b.textLen += textLen
}

// sections adds text as one or more section blocks of at most
// maxSectionText characters, split at line ends (code fences are closed
// and reopened across a split).
func (b *blockBuilder) sections(text string) {
	for _, chunk := range splitMrkdwn(text, maxSectionText) {
		if b.truncated {
			return
		}
		if !b.fits(len(chunk), 1) {
			b.truncated = true
			return
		}
		b.add(slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, chunk, false, false), nil, nil), len(chunk))
	}
}

func (b *blockBuilder) context(text string) {
	text = cut(text, maxSectionText)
	b.add(slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, text, false, false)), len(text))
}

func (b *blockBuilder) finish() []slack.Block {
	if b.truncated {
		note := "_The answer is longer than a Slack message; the full text is attached below._"
		b.blocks = append(b.blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)))
	}
	return b.blocks
}

// splitMrkdwn cuts text into chunks of at most limit bytes (so at most
// limit characters), preferring line ends, keeping ``` fences balanced.
func splitMrkdwn(text string, limit int) []string {
	if len(text) <= limit {
		return []string{text}
	}
	var (
		chunks []string
		cur    strings.Builder
		inCode bool
	)
	const fence = "```"
	flush := func() {
		s := cur.String()
		if inCode {
			s = strings.TrimRight(s, "\n") + "\n" + fence
		}
		if strings.TrimSpace(s) != "" {
			chunks = append(chunks, s)
		}
		cur.Reset()
		if inCode {
			cur.WriteString(fence + "\n")
		}
	}
	room := limit - len(fence) - 2
	for _, line := range strings.SplitAfter(text, "\n") {
		for len(line) > 0 {
			if cur.Len()+len(line) <= room {
				cur.WriteString(line)
				if strings.Count(line, fence)%2 == 1 {
					inCode = !inCode
				}
				line = ""
				continue
			}
			if cur.Len() > len(fence)+1 {
				flush()
				continue
			}
			// A single line longer than a chunk: cut it at a rune boundary.
			n := room - cur.Len()
			for n > 0 && !utf8.RuneStart(line[n]) {
				n--
			}
			cur.WriteString(line[:n])
			line = line[n:]
			flush()
		}
	}
	if cur.Len() > 0 {
		inCode = false
		flush()
	}
	return chunks
}

var (
	boldRE    = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
	linkRE    = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	bulletRE  = regexp.MustCompile(`^(\s*)[-*]\s+`)
)

// toMrkdwn converts the agent's light markdown (**bold**, `code`, "- "
// bullets, # headings, [text](url)) to Slack mrkdwn and escapes &, < and >
// as Slack requires. Code spans and fences are escaped but not rewritten.
func toMrkdwn(s string) string {
	lines := strings.Split(s, "\n")
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			lines[i] = escape(line)
			continue
		}
		if inFence {
			lines[i] = escape(line)
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			line = "**" + strings.TrimSpace(m[1]) + "**"
		}
		line = bulletRE.ReplaceAllString(line, "$1• ")
		parts := strings.Split(line, "`")
		for j := range parts {
			if j%2 == 1 && j < len(parts)-1 {
				parts[j] = escape(parts[j])
				continue
			}
			p := escape(parts[j])
			p = boldRE.ReplaceAllString(p, "*$1*")
			p = linkRE.ReplaceAllStringFunc(p, func(l string) string {
				m := linkRE.FindStringSubmatch(l)
				return "<" + m[2] + "|" + strings.ReplaceAll(m[1], "|", "¦") + ">"
			})
			parts[j] = p
		}
		lines[i] = strings.Join(parts, "`")
	}
	return strings.Join(lines, "\n")
}

// escape applies Slack's three required escapes.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// codeSafe keeps text from closing a code fence or span early.
func codeSafe(s string) string {
	return strings.ReplaceAll(s, "```", "`\u200b`\u200b`")
}

// plainAnswer is the whole reply as markdown, for the attached file.
func plainAnswer(r bot.Reply) string {
	var sb strings.Builder
	sb.WriteString(strings.TrimSpace(r.Text))
	sb.WriteString("\n")
	if len(r.Evidence) > 0 {
		sb.WriteString("\n## Evidence\n")
		for _, e := range r.Evidence {
			fmt.Fprintf(&sb, "\n- %s L%d: `%s`", e.File, e.Line, strings.TrimRight(e.Text, "\r\n"))
			if e.Reason != "" {
				sb.WriteString(" — " + e.Reason)
			}
			if !e.Verified {
				sb.WriteString(" (not verified)")
			}
		}
		sb.WriteString("\n")
	}
	if len(r.NextSteps) > 0 {
		sb.WriteString("\n## Next steps\n")
		for _, s := range r.NextSteps {
			sb.WriteString("\n- " + s)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// cut shortens s to at most n bytes at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	n -= len(ell)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ell
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// safeFileName keeps the base name of a report name.
func safeFileName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return s
}
