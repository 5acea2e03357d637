package feishu

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestCardsGolden(t *testing.T) {
	cases := map[string]string{
		"answer.json": renderCard(bot.Reply{
			Text: "**Conclusion:** the payment service ran out of DB connections at 03:04.\n- pool size 10\n- `HikariPool-1` timed out",
			Evidence: []bot.Evidence{
				{File: "app.log", Line: 1234, Text: "2026-01-02 03:04:05 ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms.", Reason: "first failure", Verified: true},
				{File: "app.log", Line: 1240, Text: "<at id=all></at> java.sql.SQLTransientConnectionException", Verified: false},
			},
			NextSteps: []string{"Raise `maximumPoolSize`", "Find the slow query holding connections"},
			Steps:     4, Tokens: 5321,
		}),
		"failed.json":   renderCard(bot.Reply{Failed: true, Text: "Sorry, I could not finish this one: attachment exceeds the size limit"}),
		"progress.json": progressCard("step 2/5: reading app.log"),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) {
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, []byte(got), "", "  "); err != nil {
				t.Fatalf("card is not JSON: %v", err)
			}
			path := filepath.Join("testdata", "cards", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("card %s differs from golden file:\n%s", name, pretty.String())
			}
		})
	}
}

func TestCardStaysUnderSizeLimit(t *testing.T) {
	ev := make([]bot.Evidence, 40)
	for i := range ev {
		ev[i] = bot.Evidence{File: "big.log", Line: i + 1, Text: strings.Repeat("x", 2000), Reason: strings.Repeat("r", 900), Verified: true}
	}
	c := renderCard(bot.Reply{Text: strings.Repeat("long answer ", 10000), Evidence: ev, NextSteps: []string{"a", "b"}})
	if len(c) > maxCardBytes {
		t.Fatalf("card is %d bytes, limit %d", len(c), maxCardBytes)
	}
	if !strings.Contains(c, "more") || !strings.Contains(c, "big.log:1") || !strings.Contains(c, "Next steps") {
		t.Errorf("shrunk card lost its structure")
	}
	if !json.Valid([]byte(c)) {
		t.Error("shrunk card is not valid JSON")
	}
	// Truncation never splits a UTF-8 rune.
	if s := truncate("日志日志", 4); s != "日…" {
		t.Errorf("truncate = %q", s)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if _, ok, err := ConfigFromEnv(env()); ok || err != nil {
		t.Errorf("unconfigured: ok=%v err=%v", ok, err)
	}
	_, ok, err := ConfigFromEnv(env("FEISHU_APP_ID", "cli_1"))
	if !ok || err == nil || !strings.Contains(err.Error(), "FEISHU_APP_SECRET") {
		t.Errorf("half configured: ok=%v err=%v", ok, err)
	}
	cfg, ok, err := ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s"))
	if !ok || err != nil || cfg.Mode != ModeLongConnection || cfg.BaseURL != FeishuBaseURL || cfg.MaxAttachmentBytes != 200<<20 {
		t.Errorf("default: %+v %v", cfg, err)
	}
	cfg, _, err = ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s", "FEISHU_DOMAIN", "lark", "SLEUTH_MAX_ATTACHMENT_MB", "5"))
	if err != nil || cfg.BaseURL != LarkBaseURL || cfg.MaxAttachmentBytes != 5<<20 {
		t.Errorf("lark: %+v %v", cfg, err)
	}
	a, err := New(cfg)
	if err != nil || a.wsDomain() != "https://open.larksuite.com" {
		t.Errorf("lark ws domain: %v", err)
	}
	cfg, _, err = ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s", "FEISHU_DOMAIN", "lark", "FEISHU_BASE_URL", "http://127.0.0.1:9/"))
	if err != nil || cfg.BaseURL != "http://127.0.0.1:9" {
		t.Errorf("base url override: %+v %v", cfg, err)
	}
	_, _, err = ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s", "FEISHU_VERIFICATION_TOKEN", "v"))
	if err == nil || !strings.Contains(err.Error(), "FEISHU_ENCRYPT_KEY") {
		t.Errorf("webhook without encrypt key: %v", err)
	}
	cfg, _, err = ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s", "FEISHU_VERIFICATION_TOKEN", "v", "FEISHU_ENCRYPT_KEY", "k"))
	if err != nil || cfg.Mode != ModeWebhook {
		t.Errorf("webhook: %+v %v", cfg, err)
	}
	for _, bad := range [][]string{{"FEISHU_DOMAIN", "mars"}, {"SLEUTH_MAX_ATTACHMENT_MB", "-1"}, {"FEISHU_MODE", "smoke"}} {
		_, _, err := ConfigFromEnv(env("FEISHU_APP_ID", "cli_1", "FEISHU_APP_SECRET", "s", bad[0], bad[1]))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%s: %v", bad[0], bad[1], err)
		}
	}
	if _, err := New(Config{}); !errors.Is(err, ErrConfig) {
		t.Errorf("empty config: %v", err)
	}
}

func TestNormalise(t *testing.T) {
	a, err := New(Config{AppID: "cli", AppSecret: "s", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	others := []map[string]any{
		{"key": "@_user_1", "id": map[string]any{"open_id": testBotID}, "name": "sleuth"},
		{"key": "@_user_2", "id": map[string]any{"open_id": "ou_bob"}, "name": "Bob"},
	}
	post := `{"title":"deploy failed","content":[[{"tag":"at","user_id":"@_user_1","user_name":"sleuth"},{"tag":"text","text":" please check, cc "},{"tag":"at","user_id":"@_user_2"}],[{"tag":"media","file_key":"file_v3_a","image_key":"img_x"}],[{"tag":"file","file_key":"file_v3_b","file_name":"b.log"}]]}`
	cases := []struct {
		name  string
		ev    msgEvent
		ok    bool
		check func(t *testing.T, m bot.Message)
	}{
		{"text mention", msgEvent{MessageID: "om_1", ChatID: "oc", MsgType: "text", Content: textContent("@_user_1  look at @_user_2 's log"), Mentions: others}, true,
			func(t *testing.T, m bot.Message) {
				if m.Text != "look at @Bob 's log" || !m.Mentioned || m.Thread != "om_1" {
					t.Errorf("%+v", m)
				}
			}},
		{"post with files", msgEvent{MessageID: "om_2", ChatID: "oc", MsgType: "post", Content: post, Mentions: others}, true,
			func(t *testing.T, m bot.Message) {
				if m.Text != "deploy failed\nplease check, cc @Bob" || !m.Mentioned {
					t.Errorf("text %q", m.Text)
				}
				if len(m.Attachments) != 2 || m.Attachments[0].ID != "file_v3_a" || m.Attachments[1].Name != "b.log" || m.Attachments[1].MessageID != "om_2" {
					t.Errorf("attachments %+v", m.Attachments)
				}
			}},
		{"topic reply", msgEvent{MessageID: "om_3", RootID: "om_root", ChatID: "oc", ChatType: "topic_group", MsgType: "text", Content: textContent("more?")}, true,
			func(t *testing.T, m bot.Message) {
				if m.Thread != "om_root" || m.Mentioned || m.DM {
					t.Errorf("%+v", m)
				}
			}},
		{"mention of someone else", msgEvent{MessageID: "om_4", ChatID: "oc", MsgType: "text", Content: textContent("@_user_2 hi"), Mentions: others[1:]}, true,
			func(t *testing.T, m bot.Message) {
				if m.Mentioned {
					t.Errorf("mentioned without the bot")
				}
			}},
		{"own message", msgEvent{MessageID: "om_5", ChatID: "oc", MsgType: "text", Content: textContent("answer"), Sender: testBotID}, false, nil},
		{"sticker", msgEvent{MessageID: "om_6", ChatID: "oc", MsgType: "sticker", Content: `{"file_key":"x"}`}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := parseMessageEvent(tc.ev.json())
			if err != nil {
				t.Fatal(err)
			}
			m, ok := a.normalise(ev, testBotID)
			if ok != tc.ok {
				t.Fatalf("ok = %v", ok)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
	// A bot sender (sender_type app) is ignored.
	raw := strings.Replace(string((msgEvent{MessageID: "om_7", ChatID: "oc", MsgType: "text", Content: textContent("x")}).json()), `"sender_type":"user"`, `"sender_type":"app"`, 1)
	ev, _ := parseMessageEvent([]byte(raw))
	if _, ok := a.normalise(ev, testBotID); ok {
		t.Error("bot sender accepted")
	}
}

func TestFileCache(t *testing.T) {
	var c fileCache
	now := time.Now()
	c.put("oc", "ou_a", now.Add(-10*time.Minute), bot.Attachment{ID: "old"})
	c.put("oc", "ou_a", now.Add(-time.Minute), bot.Attachment{ID: "new"})
	c.put("oc", "ou_b", now, bot.Attachment{ID: "bob"})
	c.put("oc2", "ou_a", now, bot.Attachment{ID: "elsewhere"})
	got := c.take("oc", "ou_a", now, 5*time.Minute)
	if len(got) != 1 || got[0].ID != "new" {
		t.Errorf("take = %+v", got)
	}
	if got := c.take("oc", "ou_a", now, 5*time.Minute); len(got) != 0 {
		t.Errorf("taken twice: %+v", got)
	}
	for i := range maxRecentFiles + 10 {
		c.put("oc", "ou_c", now, bot.Attachment{ID: string(rune('a' + i%26))})
	}
	if len(c.items) > maxRecentFiles {
		t.Errorf("cache grew to %d", len(c.items))
	}
}

func TestIdempotencyKey(t *testing.T) {
	k := idempotencyKey("om_1", "answer")
	if k != idempotencyKey("om_1", "answer") || k == idempotencyKey("om_1", "progress") || k == idempotencyKey("om_2", "answer") {
		t.Error("keys are not deterministic per message and purpose")
	}
	if len(k) != 36 || strings.Count(k, "-") != 4 {
		t.Errorf("key %q is not uuid-shaped", k)
	}
}

func FuzzDecrypt(f *testing.F) {
	f.Add("P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=", "test key")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, enc, key string) {
		_, _ = Decrypt(enc, key)
	})
}

func FuzzParseContent(f *testing.F) {
	f.Add("post", `{"title":"t","content":[[{"tag":"file","file_key":"k"}]]}`)
	f.Add("post", `{"zh_cn":{"title":"t","content":[[{"tag":"text","text":"x"}]]}}`)
	f.Add("file", `{"file_key":"k","file_name":"a.log"}`)
	f.Fuzz(func(t *testing.T, typ, content string) {
		_, files := parseContent(typ, content)
		for _, at := range files {
			if at.ID == "" || at.Name == "" {
				t.Fatalf("attachment without key or name: %+v", at)
			}
		}
	})
}
