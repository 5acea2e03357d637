package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
)

const eventMessageReceive = "im.message.receive_v1"

// Bounds of the adapter's small in-memory caches.
const (
	maxRecentFiles = 256  // files waiting for a mention
	maxSeen        = 4096 // message ids recently handed to the router
)

func parseMessageEvent(plain []byte) (*larkim.P2MessageReceiveV1, error) {
	var ev larkim.P2MessageReceiveV1
	if err := json.Unmarshal(plain, &ev); err != nil {
		return nil, err
	}
	if ev.Event == nil || ev.Event.Message == nil {
		return nil, errors.New("event has no message")
	}
	return &ev, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// handleEvent normalises one im.message.receive_v1 event and hands it to
// the router. It returns an error only when the event should be
// redelivered (the router is closed or not started); every other outcome
// is acknowledged. It never blocks long and recovers panics.
func (a *Adapter) handleEvent(ctx context.Context, ev *larkim.P2MessageReceiveV1) (err error) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("feishu event handler panicked", "error", fmt.Sprint(p))
			err = nil
		}
	}()
	in, botID := a.inboxAndBot()
	if in == nil {
		return bot.ErrClosed
	}
	m, ok := a.normalise(ev, botID)
	if !ok {
		metrics.EventsReceived.WithLabelValues(bot.PlatformFeishu, "ignored").Inc()
		return nil
	}
	if !a.seen.add(m.ID) {
		// Redelivered or duplicated by the platform: the router would drop
		// it too, but this saves the database round trip.
		metrics.EventsReceived.WithLabelValues(bot.PlatformFeishu, "duplicate").Inc()
		return nil
	}
	fileOnly := len(m.Attachments) > 0 && m.Text == "" && !m.Mentioned && !m.DM
	if !fileOnly && (m.Mentioned || m.DM) && len(m.Attachments) == 0 {
		m.Attachments = a.files.take(m.Channel, m.User, m.Time, a.cfg.FileWindow)
	}
	dctx, cancel := handleEventCtx(ctx)
	defer cancel()
	err = in.Deliver(dctx, m)
	switch {
	case err == nil, errors.Is(err, bot.ErrDuplicate):
		return nil
	case errors.Is(err, bot.ErrNotForBot):
		if fileOnly {
			for _, f := range m.Attachments {
				a.files.put(m.Channel, m.User, m.Time, f)
			}
		}
		return nil
	case errors.Is(err, bot.ErrClosed):
		a.seen.remove(m.ID)
		return err
	default:
		// Queue full or a store error: acknowledge (a retry in 15 s would
		// most likely meet the same state). The router counted it.
		a.log.Warn("feishu message not queued", "message_id", m.ID, "error", err)
		return nil
	}
}

// normalise turns the event into a bot.Message. ok is false for events
// sleuth ignores: messages from bots or from itself, and empty messages.
func (a *Adapter) normalise(ev *larkim.P2MessageReceiveV1, botID string) (bot.Message, bool) {
	msg, sender := ev.Event.Message, ev.Event.Sender
	var m bot.Message
	m.Platform = bot.PlatformFeishu
	// A self-built app lives in exactly one tenant, so the app id names
	// the tenant; unlike the event's tenant_key it is known before the
	// first event, which scheduled digests need to seed their threads.
	m.Tenant = a.Tenant()
	if ev.EventV2Base != nil && ev.EventV2Base.Header != nil {
		m.EventID = ev.EventV2Base.Header.EventID
	}
	if sender != nil {
		if t := str(sender.SenderType); t != "" && t != "user" {
			return m, false
		}
		if sender.SenderId != nil {
			m.User = str(sender.SenderId.OpenId)
		}
	}
	if m.User == "" || (botID != "" && m.User == botID) {
		return m, false
	}
	m.ID = str(msg.MessageId)
	m.Channel = str(msg.ChatId)
	if m.ID == "" || m.Channel == "" {
		return m, false
	}
	m.Thread = str(msg.RootId)
	if m.Thread == "" {
		m.Thread = m.ID
	}
	m.DM = str(msg.ChatType) == "p2p"
	if ms, err := strconv.ParseInt(str(msg.CreateTime), 10, 64); err == nil {
		m.Time = time.UnixMilli(ms)
	} else {
		m.Time = a.cfg.Now()
	}

	replace := map[string]string{}
	for _, mn := range msg.Mentions {
		if mn == nil || mn.Key == nil {
			continue
		}
		if mn.Id != nil && botID != "" && str(mn.Id.OpenId) == botID {
			m.Mentioned = true
			replace[*mn.Key] = ""
		} else {
			replace[*mn.Key] = "@" + str(mn.Name)
		}
	}
	text, files := parseContent(str(msg.MessageType), str(msg.Content))
	for k, v := range replace {
		text = strings.ReplaceAll(text, k, v)
	}
	m.Text = strings.Join(strings.Fields(text), " ")
	if strings.Contains(text, "\n") {
		// Keep line structure for multi-line questions; collapse spaces
		// per line only.
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = strings.Join(strings.Fields(l), " ")
		}
		m.Text = strings.TrimSpace(strings.Join(lines, "\n"))
	}
	for _, f := range files {
		f.MessageID = m.ID
		m.Attachments = append(m.Attachments, f)
	}
	if m.Text == "" && len(m.Attachments) == 0 && !m.Mentioned {
		return m, false
	}
	return m, true
}

// parseContent extracts text and files from a message's content JSON for
// the types sleuth reads: text, post (rich text), file.
func parseContent(msgType, content string) (string, []bot.Attachment) {
	switch msgType {
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal([]byte(content), &c)
		return c.Text, nil
	case "file":
		var c struct {
			FileKey  string `json:"file_key"`
			FileName string `json:"file_name"`
		}
		if json.Unmarshal([]byte(content), &c) != nil || c.FileKey == "" {
			return "", nil
		}
		name := c.FileName
		if name == "" {
			name = c.FileKey
		}
		return "", []bot.Attachment{{ID: c.FileKey, Name: name}}
	case "post":
		return parsePost(content)
	}
	return "", nil
}

type postElem struct {
	Tag      string `json:"tag"`
	Text     string `json:"text"`
	UserID   string `json:"user_id"`
	UserName string `json:"user_name"`
	Href     string `json:"href"`
	FileKey  string `json:"file_key"`
	FileName string `json:"file_name"`
	Language string `json:"language"`
}

type postBody struct {
	Title   string       `json:"title"`
	Content [][]postElem `json:"content"`
}

// parsePost reads rich text. Received posts carry {"title","content"}
// directly; sent ones may be wrapped by locale ({"zh_cn":{...}}).
func parsePost(content string) (string, []bot.Attachment) {
	var p postBody
	if json.Unmarshal([]byte(content), &p) != nil || p.Content == nil {
		var byLocale map[string]postBody
		if json.Unmarshal([]byte(content), &byLocale) != nil {
			return "", nil
		}
		for _, v := range byLocale {
			p = v
			break
		}
	}
	var lines []string
	if p.Title != "" {
		lines = append(lines, p.Title)
	}
	var files []bot.Attachment
	for _, para := range p.Content {
		var b strings.Builder
		for _, e := range para {
			switch e.Tag {
			case "text", "a", "code_block":
				b.WriteString(e.Text)
			case "at":
				// user_id holds the @_user_N key of the mentions list.
				b.WriteString(e.UserID)
			case "file", "media":
				if e.FileKey != "" {
					name := e.FileName
					if name == "" {
						name = e.FileKey
					}
					files = append(files, bot.Attachment{ID: e.FileKey, Name: name})
				}
			}
		}
		lines = append(lines, b.String())
	}
	return strings.Join(lines, "\n"), files
}

// fileCache remembers files posted on their own in a group, so a mention
// by the same sender in the same chat shortly after picks them up. Bounded
// to maxRecentFiles; safe for concurrent use.
type fileCache struct {
	mu    sync.Mutex
	items []recentFile
}

type recentFile struct {
	chat, user string
	at         time.Time
	file       bot.Attachment
}

func (c *fileCache) put(chat, user string, at time.Time, f bot.Attachment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= maxRecentFiles {
		c.items = append(c.items[:0], c.items[1:]...)
	}
	c.items = append(c.items, recentFile{chat: chat, user: user, at: at, file: f})
}

// take removes and returns the files chat/user posted within window
// before now (oldest first).
func (c *fileCache) take(chat, user string, now time.Time, window time.Duration) []bot.Attachment {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []bot.Attachment
	kept := c.items[:0]
	for _, it := range c.items {
		age := now.Sub(it.at)
		switch {
		case age > window:
			// expired: drop
		case it.chat == chat && it.user == user && age >= -time.Minute:
			out = append(out, it.file)
		default:
			kept = append(kept, it)
		}
	}
	c.items = kept
	return out
}

// seenSet is a bounded set of recently handled message ids (FIFO
// eviction). Safe for concurrent use.
type seenSet struct {
	mu    sync.Mutex
	set   map[string]struct{}
	order []string
}

func newSeenSet() *seenSet { return &seenSet{set: make(map[string]struct{})} }

// add reports whether id was new.
func (s *seenSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[id]; ok {
		return false
	}
	if len(s.order) >= maxSeen {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
	}
	s.set[id] = struct{}{}
	s.order = append(s.order, id)
	return true
}

func (s *seenSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.set, id)
}

// Tenant returns the tenant id used in session keys and memory scopes:
// the app id (a self-built app belongs to one tenant).
func (a *Adapter) Tenant() string { return a.cfg.AppID }
