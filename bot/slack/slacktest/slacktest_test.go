package slacktest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// post calls a Web API method the way slack-go does (form-encoded) and
// decodes the {"ok": …} answer.
func post(t *testing.T, s *Server, method string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.APIURL()+method, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+BotToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, v
}

func TestFailRateLimitAndRecord(t *testing.T) {
	s := New(t)
	s.Fail("chat.postMessage", "channel_not_found", 2)
	s.RateLimit("reactions.add", 1)
	for i := 0; i < 2; i++ {
		if code, v := post(t, s, "chat.postMessage", url.Values{"channel": {"C1"}}); code != 200 || v["ok"] != false || v["error"] != "channel_not_found" {
			t.Fatalf("failing post %d = %d %v", i, code, v)
		}
	}
	code, v := post(t, s, "chat.postMessage", url.Values{"channel": {"C1"}, "text": {"hi"}})
	if code != 200 || v["ok"] != true || v["ts"] != "1700000100.000001" || v["channel"] != "C1" {
		t.Fatalf("post after the failures = %d %v", code, v)
	}
	if code, _ := post(t, s, "reactions.add", nil); code != http.StatusTooManyRequests {
		t.Errorf("rate-limited call = %d; want 429", code)
	}
	if code, v := post(t, s, "reactions.add", nil); code != 200 || v["ok"] != true {
		t.Errorf("call after the 429 = %d %v", code, v)
	}
	if _, v := post(t, s, "auth.test", nil); v["team_id"] != TeamID || v["user_id"] != BotUserID {
		t.Errorf("auth.test = %v", v)
	}
	calls := s.Calls("chat.postMessage")
	if len(calls) != 3 || calls[2].Form.Get("text") != "hi" || calls[2].Auth != "Bearer "+BotToken {
		t.Errorf("recorded posts = %+v", calls)
	}
	if n := len(s.AllCalls()); n != 6 {
		t.Errorf("recorded %d calls; want 6", n)
	}

	s.Fail("chat.update", "message_not_found", -1)
	for i := 0; i < 3; i++ {
		if _, v := post(t, s, "chat.update", nil); v["ok"] != false {
			t.Fatalf("always-failing update %d = %v", i, v)
		}
	}
}

func TestDownloadsNeedTheBotToken(t *testing.T) {
	s := New(t)
	s.AddFile("/files/app.log", []byte("ERROR x\n"))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL + "/files/app.log")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/signin") {
		t.Errorf("download without token = %d %s; want a redirect to sign-in", resp.StatusCode, resp.Header.Get("Location"))
	}
}
