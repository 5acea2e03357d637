package slack

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
)

// Event outcomes counted in metrics.EventsReceived.
// The router counts the outcomes of delivered messages; these are the
// ones the adapter decides alone.
const (
	outcomeIgnored  = "ignored"
	outcomeRejected = "rejected"
)

// Message subtypes that are a person writing: a plain message, a message
// with files, and a thread reply also sent to the channel. Every other
// subtype (bot_message, message_changed, channel_join, …) is ignored.
var userSubtypes = map[string]bool{
	"":                              true,
	slack.MsgSubTypeFileShare:       true,
	slack.MsgSubTypeThreadBroadcast: true,
}

// Suggested prompts shown when someone opens sleuth's assistant panel.
var suggestedPrompts = []slack.AssistantThreadsPrompt{
	{Title: "Why did this fail?", Message: "Why did this fail?"},
	{Title: "What changed since the last run?", Message: "What changed since the last run?"},
}

// dispatch turns one Events API payload into at most one bot.Message and
// hands it to in. It does no Web API call on this path (those go to the
// side queue), so it returns as fast as in.Deliver.
func (a *Adapter) dispatch(ctx context.Context, in bot.Inbox, ev slackevents.EventsAPIEvent, retry int) {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		if ev.Type == slackevents.AppRateLimited {
			a.log.Warn("slack: Slack is rate limiting this app's events (app_rate_limited)")
		}
		return
	}
	a.learnBot(cb.Authorizations)
	team := ev.TeamID
	if team == "" {
		team = cb.TeamID
	}

	var (
		m   bot.Message
		why string
	)
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		m, why = a.fromMention(e)
	case *slackevents.MessageEvent:
		m, why = a.fromMessage(e)
	case *slackevents.AssistantThreadStartedEvent:
		a.assistantStarted(e.AssistantThread)
		return
	case *slackevents.AssistantThreadContextChangedEvent:
		a.assistant.add(e.AssistantThread.ChannelID, e.AssistantThread.ThreadTimeStamp)
		return
	default:
		why = "event type " + ev.InnerEvent.Type
	}
	if why != "" {
		metrics.EventsReceived.WithLabelValues(bot.PlatformSlack, outcomeIgnored).Inc()
		a.log.Debug("slack: event ignored", "event_id", cb.EventID, "reason", why)
		return
	}
	m.Platform = bot.PlatformSlack
	m.Tenant = team
	m.EventID = cb.EventID
	m.Link = a.permalink(m)

	// The router counts what it does with the message
	// (metrics.EventsReceived); the adapter counts only what it drops.
	err := in.Deliver(ctx, m)
	switch {
	case err == nil:
		a.log.Debug("slack: message queued", "event_id", m.EventID, "channel", m.Channel, "ts", m.ID, "retry", retry)
	case errors.Is(err, bot.ErrDuplicate), errors.Is(err, bot.ErrNotForBot):
		a.log.Debug("slack: message not queued", "event_id", m.EventID, "channel", m.Channel, "ts", m.ID, "retry", retry, "reason", err.Error())
	case errors.Is(err, bot.ErrQueueFull):
		a.log.Warn("slack: thread queue full", "channel", m.Channel, "ts", m.ID)
		a.later("busy notice", func(ctx context.Context) {
			_, perr := a.Post(ctx, bot.Conversation{Platform: bot.PlatformSlack, Channel: m.Channel, Thread: replyThread(m)},
				bot.Reply{Text: "I'm still working through earlier messages in this thread. Please ask again in a minute.", Failed: true})
			if perr != nil {
				a.log.Warn("slack: busy notice failed", "error", perr)
			}
		})
	default:
		a.log.Warn("slack: router refused a message", "event_id", m.EventID, "channel", m.Channel, "ts", m.ID, "error", err)
	}
}

// learnBot records the bot's user id from an event's authorizations when
// auth.test has not given it yet.
func (a *Adapter) learnBot(auths []slack.EventAuthorization) {
	if a.bot() != "" {
		return
	}
	for _, au := range auths {
		if au.IsBot && au.UserID != "" {
			a.botUser.Store(au.UserID)
			return
		}
	}
}

// fromMention normalises an app_mention. why is non-empty when the event
// is not for the bot to answer.
func (a *Adapter) fromMention(e *slackevents.AppMentionEvent) (bot.Message, string) {
	if e.BotID != "" || e.User == "" || e.User == a.bot() {
		return bot.Message{}, "mention by a bot"
	}
	if e.AssistantThread != nil && e.ThreadTimeStamp != "" {
		a.assistant.add(e.Channel, e.ThreadTimeStamp)
	}
	return bot.Message{
		Channel:     e.Channel,
		Thread:      firstNonEmpty(e.ThreadTimeStamp, e.TimeStamp),
		ID:          e.TimeStamp,
		User:        e.User,
		Text:        a.stripMention(e.Text),
		Mentioned:   true,
		DM:          strings.HasPrefix(e.Channel, "D"),
		Attachments: attachments(e.Files),
		Time:        tsTime(e.TimeStamp),
	}, ""
}

// fromMessage normalises a message event: a DM, or a reply in a thread
// (the router decides whether that thread has a session). The channel
// twin of an @mention is dropped: the app_mention event answers it.
func (a *Adapter) fromMessage(e *slackevents.MessageEvent) (bot.Message, string) {
	if !userSubtypes[e.SubType] {
		return bot.Message{}, "subtype " + e.SubType
	}
	if e.BotID != "" || e.User == "" || e.User == a.bot() {
		return bot.Message{}, "message from a bot"
	}
	dm := e.ChannelType == "im"
	mentioned := a.mentions(e.Text)
	inThread := e.ThreadTimeStamp != "" && e.ThreadTimeStamp != e.TimeStamp
	if !dm {
		if mentioned {
			return bot.Message{}, "twin of an app_mention"
		}
		if !inThread {
			return bot.Message{}, "channel message outside a thread"
		}
	}
	if e.AssistantThread != nil && e.ThreadTimeStamp != "" {
		a.assistant.add(e.Channel, e.ThreadTimeStamp)
	}
	var files []slack.File
	if e.Message != nil {
		files = e.Message.Files
	}
	return bot.Message{
		Channel:     e.Channel,
		Thread:      firstNonEmpty(e.ThreadTimeStamp, e.TimeStamp),
		ID:          e.TimeStamp,
		User:        e.User,
		Text:        a.stripMention(e.Text),
		DM:          dm,
		Mentioned:   dm && mentioned,
		Attachments: attachments(files),
		Time:        tsTime(e.TimeStamp),
	}, ""
}

// mentionRE matches a user mention token: <@U123> or <@U123|name>.
var mentionRE = regexp.MustCompile(`<@([UW][A-Z0-9]+)(\|[^>]*)?>`)

// mentions reports whether text mentions the bot. When the bot's id is not
// known yet, any user mention counts, so a possible twin is dropped rather
// than answered twice.
func (a *Adapter) mentions(text string) bool {
	botID := a.bot()
	for _, sm := range mentionRE.FindAllStringSubmatch(text, -1) {
		if botID == "" || sm[1] == botID {
			return true
		}
	}
	return false
}

// stripMention removes the bot's mention tokens (or, when the bot's id is
// unknown, a leading mention) with the blanks after them; the rest of the
// text (pasted log lines) is kept as written.
func (a *Adapter) stripMention(text string) string {
	botID := a.bot()
	trimmed := strings.TrimLeft(text, " \t")
	first := true
	out := mentionTokRE.ReplaceAllStringFunc(text, func(tok string) string {
		sm := mentionRE.FindStringSubmatch(tok)
		isFirst := first && strings.HasPrefix(trimmed, strings.TrimRight(tok, " \t"))
		first = false
		if sm[1] == botID || (botID == "" && isFirst) {
			return ""
		}
		return tok
	})
	return strings.TrimSpace(out)
}

// mentionTokRE is mentionRE with the blanks that follow the token.
var mentionTokRE = regexp.MustCompile(`<@[UW][A-Z0-9]+(\|[^>]*)?>[ \t]*`)

// attachments converts Slack files to attachment references. A Slack
// Connect file that arrives as {"file_access":"check_file_info"} has no
// URL; Open looks it up with files.info.
func attachments(files []slack.File) []bot.Attachment {
	var out []bot.Attachment
	for _, f := range files {
		if f.ID == "" {
			continue
		}
		name := firstNonEmpty(f.Name, f.Title, f.ID)
		u := firstNonEmpty(f.URLPrivateDownload, f.URLPrivate)
		if f.FileAccess == "check_file_info" {
			u = ""
		}
		out = append(out, bot.Attachment{ID: f.ID, Name: name, Size: int64(f.Size), MIME: f.Mimetype, URL: u})
	}
	return out
}

// permalink builds the thread's link from the workspace URL auth.test
// gave (https://team.slack.com/archives/C1/p1700000000000100).
func (a *Adapter) permalink(m bot.Message) string {
	base, _ := a.teamURL.Load().(string)
	if base == "" || m.Channel == "" || m.Thread == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/archives/" + m.Channel + "/p" + strings.ReplaceAll(m.Thread, ".", "")
}

// assistantStarted records an assistant thread and offers the suggested
// prompts (best effort, off the receive path).
func (a *Adapter) assistantStarted(t slackevents.AssistantThread) {
	if t.ChannelID == "" || t.ThreadTimeStamp == "" {
		return
	}
	a.assistant.add(t.ChannelID, t.ThreadTimeStamp)
	a.later("assistant.threads.setSuggestedPrompts", func(ctx context.Context) {
		err := a.call(ctx, "assistant.threads.setSuggestedPrompts", func(ctx context.Context) error {
			return a.api.SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
				Title:     "Drop a log file and ask:",
				ChannelID: t.ChannelID,
				ThreadTS:  t.ThreadTimeStamp,
				Prompts:   suggestedPrompts,
			})
		})
		if err != nil {
			a.log.Warn("slack: suggested prompts failed", "error", err)
		}
	})
}

// maxAssistantThreads bounds the assistant threads remembered in memory.
const maxAssistantThreads = 10000

// threadSet is a bounded set of channel/thread pairs; the oldest entries
// go first when it is full. Safe for concurrent use.
type threadSet struct {
	mu    sync.Mutex
	max   int
	seen  map[string]time.Time
	order []string
}

func newThreadSet(max int) *threadSet {
	return &threadSet{max: max, seen: make(map[string]time.Time)}
}

func (s *threadSet) add(channel, thread string) {
	k := channel + "/" + thread
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[k]; ok {
		return
	}
	for len(s.order) >= s.max {
		delete(s.seen, s.order[0])
		s.order = s.order[1:]
	}
	s.seen[k] = time.Now()
	s.order = append(s.order, k)
}

func (s *threadSet) has(channel, thread string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.seen[channel+"/"+thread]
	return ok
}

// tsTime parses a Slack ts ("1700000000.000100").
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	var us int64
	if frac != "" {
		frac = (frac + "000000")[:6]
		us, _ = strconv.ParseInt(frac, 10, 64)
	}
	return time.Unix(s, us*1000).UTC()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
