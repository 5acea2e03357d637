package feishu

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/bot"
)

// Card limits.
const (
	// maxCardBytes keeps a card under im.message.patch's 30 KB body limit
	// (the reply limit is the same for interactive messages), with room
	// for the JSON envelope of the request.
	maxCardBytes = 28 << 10
	// maxEvidence is how many evidence lines a card shows; the rest are
	// counted.
	maxEvidence = 12
	// maxEvidenceText truncates one quoted log line.
	maxEvidenceText = 300
	// maxNextSteps is how many next steps a card shows.
	maxNextSteps = 8
)

// card is a message card in JSON 2.0. Only the properties sleuth uses are
// modelled: unknown properties make Feishu reject the card.
type card struct {
	Schema string     `json:"schema"`
	Config cardConfig `json:"config"`
	Header cardHeader `json:"header"`
	Body   cardBody   `json:"body"`
}

type cardConfig struct {
	// UpdateMulti must be true in JSON 2.0 (shared card, patchable).
	UpdateMulti bool `json:"update_multi"`
}

type cardHeader struct {
	Title    cardText `json:"title"`
	Template string   `json:"template"`
}

type cardText struct {
	Tag       string `json:"tag"`
	Content   string `json:"content"`
	TextSize  string `json:"text_size,omitempty"`
	TextColor string `json:"text_color,omitempty"`
}

type cardBody struct {
	Elements []cardElement `json:"elements"`
}

type cardElement struct {
	Tag      string    `json:"tag"`
	Content  string    `json:"content,omitempty"`
	TextSize string    `json:"text_size,omitempty"`
	Text     *cardText `json:"text,omitempty"`
}

// escapeMarkdown neutralises card-markdown tags in text that reaches a
// markdown element, so a log line or a model's answer cannot @all a chat
// (<at id=all></at>) or inject links and fonts.
func escapeMarkdown(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func md(s string) cardElement { return cardElement{Tag: "markdown", Content: s} }

// renderCard renders a reply as a JSON 2.0 card: the conclusion, the
// evidence lines (quoted as plain text, never parsed as markdown), next
// steps and a footer with the run's size. The result stays under
// maxCardBytes: the answer text is shortened first, then evidence dropped.
func renderCard(r bot.Reply) string {
	textMax := 12000
	evMax := maxEvidence
	for {
		s := buildCard(r, textMax, evMax)
		if len(s) <= maxCardBytes || (textMax <= 500 && evMax == 0) {
			return s
		}
		if textMax > 500 {
			textMax /= 2
		} else {
			evMax /= 2
		}
	}
}

func buildCard(r bot.Reply, textMax, evMax int) string {
	c := newCard("sleuth", "blue")
	if r.Failed {
		c.Header = cardHeader{Title: cardText{Tag: "plain_text", Content: "sleuth · could not finish"}, Template: "red"}
	}
	text := strings.TrimSpace(r.Text)
	if text == "" {
		text = "(no answer)"
	}
	c.add(md(escapeMarkdown(truncate(text, textMax))))
	if len(r.Evidence) > 0 {
		c.add(cardElement{Tag: "hr"})
		c.add(md("**Evidence**"))
		for i, e := range r.Evidence {
			if i == evMax {
				c.add(md(fmt.Sprintf("…and %d more", len(r.Evidence)-evMax)))
				break
			}
			mark := "✅"
			if !e.Verified {
				mark = "⚠️ unverified"
			}
			head := fmt.Sprintf("%s **%s:%d**", mark, escapeMarkdown(e.File), e.Line)
			if e.Reason != "" {
				head += " — " + escapeMarkdown(truncate(e.Reason, maxEvidenceText))
			}
			c.add(md(head))
			if t := strings.TrimRight(e.Text, "\r\n"); t != "" {
				c.add(cardElement{Tag: "div", Text: &cardText{Tag: "plain_text", Content: truncate(t, maxEvidenceText), TextSize: "notation", TextColor: "grey"}})
			}
		}
	}
	if len(r.NextSteps) > 0 {
		c.add(cardElement{Tag: "hr"})
		var b strings.Builder
		b.WriteString("**Next steps**")
		for i, s := range r.NextSteps {
			if i == maxNextSteps {
				break
			}
			fmt.Fprintf(&b, "\n%d. %s", i+1, escapeMarkdown(truncate(s, 500)))
		}
		c.add(md(b.String()))
	}
	if r.Steps > 0 || r.Tokens > 0 {
		c.add(cardElement{Tag: "markdown", Content: fmt.Sprintf("%d steps · %d tokens", r.Steps, r.Tokens), TextSize: "notation"})
	}
	return c.json()
}

// progressCard is the placeholder shown while the agent works.
func progressCard(status string) string {
	c := newCard("sleuth · working", "wathet")
	c.add(md("⏳ " + escapeMarkdown(truncate(status, 1000))))
	return c.json()
}

func newCard(title, template string) *card {
	return &card{
		Schema: "2.0",
		Config: cardConfig{UpdateMulti: true},
		Header: cardHeader{Title: cardText{Tag: "plain_text", Content: title}, Template: template},
	}
}

func (c *card) add(e cardElement) { c.Body.Elements = append(c.Body.Elements, e) }

func (c *card) json() string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		// Only strings and bools: cannot fail.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
