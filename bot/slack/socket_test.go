package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"gopkg.in/yaml.v3"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
)

// lockedInbox records deliveries; safe for concurrent use.
type lockedInbox struct {
	mu   sync.Mutex
	msgs []bot.Message
}

func (l *lockedInbox) Deliver(_ context.Context, m bot.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, m)
	return nil
}

func (l *lockedInbox) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// TestSocketModeEndToEnd runs slack-go's socketmode client against a test
// WebSocket server speaking Socket Mode: hello, one events_api envelope,
// then it waits for the ack.
func TestSocketModeEndToEnd(t *testing.T) {
	fake := slacktest.New(t)
	acks := make(chan string, 4)
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	fake.SetWebSocket(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1})
		payload := json.RawMessage(callback("EvSock", map[string]any{
			"type": "app_mention", "user": "U1", "text": "<@UBOT> what broke?", "ts": "1700000000.000900", "channel": "C1",
		}))
		_ = conn.WriteJSON(map[string]any{"envelope_id": "env-42", "type": "events_api", "payload": payload, "accepts_response_payload": false, "retry_attempt": 0})
		for {
			var msg map[string]any
			if err := conn.ReadJSON(&msg); err != nil {
				return
			}
			if id, _ := msg["envelope_id"].(string); id != "" {
				acks <- id
			}
		}
	})
	ad, err := New(Config{BotToken: testBotToken, AppToken: "xapp-test", APIURL: fake.APIURL(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	in := &lockedInbox{}
	if err := ad.Ready(context.Background()); !errors.Is(err, ErrNotReady) {
		t.Errorf("Ready before Run = %v, want ErrNotReady", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, in) }()

	select {
	case id := <-acks:
		if id != "env-42" {
			t.Fatalf("acked %q, want env-42", id)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("no ack within 10 s; calls: %+v", fake.AllCalls())
	}
	waitFor(t, "delivery", func() bool { return in.count() == 1 })
	if err := ad.Ready(ctx); err != nil {
		t.Errorf("Ready while connected = %v", err)
	}
	m := in.msgs[0]
	if m.Text != "what broke?" || m.EventID != "EvSock" || !m.Mentioned || m.Platform != bot.PlatformSlack {
		t.Errorf("delivered %+v", m)
	}
	if len(fake.Calls("apps.connections.open")) == 0 || fake.Calls("apps.connections.open")[0].Auth != "Bearer xapp-test" {
		t.Error("apps.connections.open was not called with the app token")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}

// The manifest asks for every scope and event the adapter relies on.
func TestManifestScopesAndEvents(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "slack-app-manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				Bot []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"app_mentions:read", "channels:history", "groups:history", "im:history", "mpim:history", "chat:write", "reactions:write", "files:read", "files:write", "assistant:write"} {
		if !slices.Contains(m.OAuth.Scopes.Bot, s) {
			t.Errorf("manifest lacks scope %s", s)
		}
	}
	for _, e := range []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim", "assistant_thread_started"} {
		if !slices.Contains(m.Settings.Events.Bot, e) {
			t.Errorf("manifest lacks event %s", e)
		}
	}
	if !m.Settings.SocketMode {
		t.Error("manifest should default to Socket Mode")
	}
}
