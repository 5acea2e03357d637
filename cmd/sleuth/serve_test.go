package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/agent/llmtest"
	"github.com/sleuth-bot/sleuth/bot/slack/slacktest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// TestMain removes the binary built by buildBinary.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// buildBinary builds sleuth once per test binary.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sleuth-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "sleuth")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type server struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer
	exited chan error
}

func startServer(t *testing.T, bin string, env ...string) *server {
	t.Helper()
	s := &server{addr: freeAddr(t), stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin)
	s.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"SLEUTH_DATA_DIR=" + t.TempDir(), "SLEUTH_HTTP_ADDR=" + s.addr, "SLEUTH_LOG_FORMAT=json",
	}, env...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("sleuth did not start:\n%s", s.stderr)
	return nil
}

type answer struct {
	Thread string `json:"thread"`
	Reply  string `json:"reply"`
	Error  string `json:"error"`
}

func ask(addr, text string) (answer, error) {
	body, _ := json.Marshal(map[string]string{"text": text})
	resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	var a answer
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a); err != nil {
		return answer{}, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return a, nil
}

// TestSIGTERMDuringARunLosesNoTurn sends SIGTERM while the model is
// answering: a turn that finishes within the grace period is delivered; a
// turn cut off after it is answered with an honest "interrupted" message.
func TestSIGTERMDuringARunLosesNoTurn(t *testing.T) {
	bin := buildBinary(t)
	srv := llmtest.New(t,
		llmtest.Reply{Text: "The deploy finished fine.", Delay: 1500 * time.Millisecond},
	)
	s := startServer(t, bin, "LLM_BASE_URL="+srv.URL, "LLM_MODEL=scripted", "LLM_API_KEY=k", "SLEUTH_SHUTDOWN_GRACE=5s")

	got := make(chan answer, 1)
	go func() {
		a, err := ask(s.addr, "did the deploy finish?")
		if err != nil {
			a.Error = err.Error()
		}
		got <- a
	}()
	// Wait until the model has the request, then SIGTERM.
	waitFor(t, func() bool { return len(srv.Requests()) > 0 })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.Error != "" || !strings.Contains(a.Reply, "The deploy finished fine.") {
		t.Fatalf("turn in flight at SIGTERM was not answered: %+v\n%s", a, s.stderr)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, s.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("sleuth did not exit after SIGTERM")
	}
	if !strings.Contains(s.stderr.String(), `"msg":"sleuth stopped"`) {
		t.Fatalf("no clean stop logged:\n%s", s.stderr)
	}
}

func TestSIGTERMCutOffTurnIsToldItWasInterrupted(t *testing.T) {
	bin := buildBinary(t)
	srv := llmtest.New(t, llmtest.Reply{Text: "too late", Delay: 30 * time.Second})
	s := startServer(t, bin, "LLM_BASE_URL="+srv.URL, "LLM_MODEL=scripted", "LLM_API_KEY=k",
		"SLEUTH_SHUTDOWN_GRACE=1s", "LLM_TIMEOUT=60s")
	got := make(chan answer, 1)
	go func() {
		a, err := ask(s.addr, "why is it slow?")
		if err != nil {
			a.Error = err.Error()
		}
		got <- a
	}()
	waitFor(t, func() bool { return len(srv.Requests()) > 0 })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if !strings.Contains(strings.ToLower(a.Reply), "interrupted") {
			t.Fatalf("cut-off turn not told: %+v\n%s", a, s.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer for the cut-off turn\n%s", s.stderr)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("sleuth did not exit")
	}
}

func TestBadConfigNamesTheVariable(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"SLEUTH_DATA_DIR=" + t.TempDir(), "SLEUTH_MAX_ATTACHMENT_MB=lots", "SLEUTH_HTTP_ADDR=nope"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v\n%s", err, out)
	}
	for _, want := range []string{"SLEUTH_MAX_ATTACHMENT_MB", "SLEUTH_HTTP_ADDR"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message does not name %s:\n%s", want, out)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not met within 20s")
}

// The unauthenticated local chat API is not served next to a platform
// unless asked for.
func TestLocalAPIOffWithAPlatform(t *testing.T) {
	bin := buildBinary(t)
	fake := slacktest.New(t)
	slackEnv := []string{"SLACK_BOT_TOKEN=" + slacktest.BotToken, "SLACK_SIGNING_SECRET=s3cret", "SLACK_API_URL=" + fake.APIURL()}
	for _, tc := range []struct {
		env  []string
		want int
	}{
		{slackEnv, http.StatusNotFound},
		{append(slackEnv, "SLEUTH_LOCAL_API=on"), http.StatusBadRequest}, // served: empty text is refused
	} {
		s := startServer(t, bin, tc.env...)
		resp, err := http.Post("http://"+s.addr+"/v1/messages", "application/json", strings.NewReader(`{"text":""}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("env %v: POST /v1/messages = %d, want %d", tc.env[len(tc.env)-1], resp.StatusCode, tc.want)
		}
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.exited
	}
}
