package feishu

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"

	"github.com/sleuth-bot/sleuth/bot"
)

// TestLongConnection runs the SDK's ws client against an in-process
// endpoint speaking the long-connection protocol (bootstrap POST, then
// protobuf frames over a WebSocket): an event frame reaches the router and
// is acked with 200; the same frame again is acked without a second run.
func TestLongConnection(t *testing.T) {
	if raceEnabled {
		// ws.Client.Close writes fields its read loop reads without a lock
		// (oapi-sdk-go v3.9.2, ws/client.go Close vs receiveMessageLoop).
		t.Skip("the SDK's ws client races on Close; run without -race")
	}
	f := newFakeFeishu(t)
	acks := make(chan int, 4)
	frames := make(chan []byte, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /callback/ws/endpoint", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ AppID, AppSecret string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.AppID != "cli_test" || in.AppSecret != "secret" {
			writeJSON(w, map[string]any{"code": 514, "msg": "auth failed"})
			return
		}
		u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws?device_id=d1&service_id=7"
		writeJSON(w, map[string]any{"code": 0, "data": map[string]any{"URL": u, "ClientConfig": map[string]any{"PingInterval": 120}}})
	})
	up := websocket.Upgrader{}
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		go func() {
			for {
				_, msg, err := conn.ReadMessage()
				if err != nil {
					return
				}
				var fr larkws.Frame
				if fr.Unmarshal(msg) != nil || fr.Method != int32(larkws.FrameTypeData) {
					continue // pings
				}
				var resp struct {
					StatusCode int `json:"code"`
				}
				_ = json.Unmarshal(fr.Payload, &resp)
				acks <- resp.StatusCode
			}
		}()
		for {
			select {
			case p := <-frames:
				fr := larkws.Frame{SeqID: 1, Service: 7, Method: int32(larkws.FrameTypeData), Payload: p,
					Headers: []larkws.Header{{Key: "type", Value: "event"}, {Key: "message_id", Value: "m1"}, {Key: "sum", Value: "1"}, {Key: "seq", Value: "0"}, {Key: "trace_id", Value: "tr"}}}
				b, _ := fr.Marshal()
				if conn.WriteMessage(websocket.BinaryMessage, b) != nil {
					return
				}
			case <-r.Context().Done():
				return
			}
		}
	})
	// Route the fake Open API through the same server.
	f.srv.Config.Handler = combine(mux, f.srv.Config.Handler)

	sessions := newFakeSessions()
	runner := &fakeRunner{sessions: sessions, done: make(chan struct{}, 4)}
	a := newTestAdapter(t, f, func(c *Config) { c.Mode = ModeLongConnection; c.VerificationToken, c.EncryptKey = "", "" })
	r, err := bot.NewRouter(bot.RouterConfig{Runner: runner, Sessions: sessions, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Attach(a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	runErr := make(chan error, 1)
	go func() { runErr <- a.Run(ctx, r) }()

	ev := msgEvent{EventID: "ev_ws", MessageID: "om_ws", ChatID: "oc", MsgType: "text", Content: textContent("@_user_1 hi"), Mentions: botMention()}
	frames <- ev.json()
	select {
	case code := <-acks:
		if code != 200 {
			t.Fatalf("ack code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ack over the long connection")
	}
	select {
	case <-runner.done:
	case <-time.After(5 * time.Second):
		t.Fatal("runner not called")
	}
	frames <- ev.json()
	if code := <-acks; code != 200 {
		t.Fatalf("redelivery ack %d", code)
	}
	time.Sleep(100 * time.Millisecond)
	runner.mu.Lock()
	n := len(runner.turns)
	m := runner.turns[0].Message
	runner.mu.Unlock()
	if n != 1 || m.Text != "hi" || !m.Mentioned {
		t.Errorf("runs %d, message %+v", n, m)
	}
	cancel()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Run did not return after cancel")
	}
}

// combine serves from the first handler that knows the path.
func combine(first *http.ServeMux, rest http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := first.Handler(r); pattern != "" {
			first.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}
