// Package local is the embedded default chat: a terminal chat and a
// localhost HTTP API, for trying sleuth with no platform account. Both go
// through the same router, sessions and agent as Slack and Feishu.
package local

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sleuth-bot/sleuth/bot"
)

// Defaults for ids that scope sessions and memory like a platform's ids.
const (
	Tenant         = "local"
	DefaultUser    = "local-user"
	DefaultChannel = "local"
	// maxRequestBytes caps a POST /v1/messages body (base64 attachments
	// included).
	maxRequestBytes = 64 << 20
	// maxPosts is how many posted messages (digests, notices) GET /v1/posts keeps.
	maxPosts = 200
)

// Config configures the local adapter.
type Config struct {
	// SpoolDir receives attachments sent as content_base64. Required.
	SpoolDir string
	// MaxAttachmentBytes caps each attachment; default 200 MiB.
	MaxAttachmentBytes int64
	// ReplyTimeout bounds how long an HTTP request waits for its answer;
	// default 10 minutes.
	ReplyTimeout time.Duration
	// Out receives the terminal chat's output and posted messages; nil
	// discards them.
	Out    io.Writer
	Logger *slog.Logger
}

// Adapter implements bot.Adapter for the terminal and the HTTP API.
type Adapter struct {
	cfg Config
	log *slog.Logger
	seq atomic.Int64

	mu      sync.Mutex
	inbox   bot.Inbox
	waiters map[string]chan bot.Reply // message id -> its answer
	posts   []Post
}

// Post is a message posted by sleuth outside a request (digests, notices).
type Post struct {
	ID           string           `json:"id"`
	Conversation bot.Conversation `json:"conversation"`
	Text         string           `json:"text"`
	At           time.Time        `json:"at"`
}

// New validates cfg and returns an adapter.
func New(cfg Config) (*Adapter, error) {
	if cfg.SpoolDir == "" {
		return nil, errors.New("local: SpoolDir is required")
	}
	if cfg.MaxAttachmentBytes <= 0 {
		cfg.MaxAttachmentBytes = 200 << 20
	}
	if cfg.ReplyTimeout <= 0 {
		cfg.ReplyTimeout = 10 * time.Minute
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.SpoolDir, 0o700); err != nil {
		return nil, fmt.Errorf("local: spool dir: %w", err)
	}
	a := &Adapter{cfg: cfg, log: cfg.Logger, waiters: map[string]chan bot.Reply{}}
	a.seq.Store(time.Now().UnixNano())
	return a, nil
}

// Platform implements bot.Adapter.
func (a *Adapter) Platform() string { return bot.PlatformLocal }

// Run keeps the inbox for the HTTP API and the terminal; it returns when
// ctx is done.
func (a *Adapter) Run(ctx context.Context, in bot.Inbox) error {
	a.mu.Lock()
	a.inbox = in
	a.mu.Unlock()
	<-ctx.Done()
	return nil
}

func (a *Adapter) getInbox() (bot.Inbox, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inbox == nil {
		return nil, errors.New("sleuth is starting; try again in a moment")
	}
	return a.inbox, nil
}

// Post implements bot.Adapter: it prints the message and keeps it for GET
// /v1/posts.
func (a *Adapter) Post(_ context.Context, to bot.Conversation, r bot.Reply) (string, error) {
	id := a.nextID()
	p := Post{ID: id, Conversation: to, Text: bot.RenderText(r), At: time.Now()}
	a.mu.Lock()
	a.posts = append(a.posts, p)
	if len(a.posts) > maxPosts {
		a.posts = a.posts[len(a.posts)-maxPosts:]
	}
	a.mu.Unlock()
	fmt.Fprintf(a.cfg.Out, "\n[posted to %s, thread %s]\n%s\n", to.Channel, id, p.Text)
	return id, nil
}

// Posts returns the messages posted so far, oldest first.
func (a *Adapter) Posts() []Post {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Post(nil), a.posts...)
}

// Open implements bot.Adapter: attachments are local files.
func (a *Adapter) Open(_ context.Context, att bot.Attachment) (io.ReadCloser, error) {
	if att.Path == "" {
		return nil, fmt.Errorf("attachment %q has no path", att.Name)
	}
	f, err := os.Open(att.Path)
	if err != nil {
		return nil, fmt.Errorf("open attachment %q: %w", att.Name, err)
	}
	return bot.OpenLimited(f, a.cfg.MaxAttachmentBytes), nil
}

// StartProgress implements bot.Adapter.
func (a *Adapter) StartProgress(_ context.Context, m bot.Message) bot.Progress {
	return &progress{a: a, id: m.ID}
}

type progress struct {
	a  *Adapter
	id string
}

func (p *progress) Update(_ context.Context, text string) {
	p.a.mu.Lock()
	_, waiting := p.a.waiters[p.id]
	p.a.mu.Unlock()
	if !waiting {
		return
	}
	fmt.Fprintf(p.a.cfg.Out, "  … %s\n", text)
}

func (p *progress) Finish(_ context.Context, r bot.Reply) (string, error) {
	p.a.mu.Lock()
	ch, ok := p.a.waiters[p.id]
	delete(p.a.waiters, p.id)
	p.a.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no one is waiting for the answer to %s", p.id)
	}
	ch <- r
	return p.id + "-reply", nil
}

func (a *Adapter) nextID() string { return strconv.FormatInt(a.seq.Add(1), 36) }

// Request is the body of POST /v1/messages.
type Request struct {
	Thread      string              `json:"thread,omitempty"`
	User        string              `json:"user,omitempty"`
	Channel     string              `json:"channel,omitempty"`
	Text        string              `json:"text"`
	Attachments []RequestAttachment `json:"attachments,omitempty"`
}

// RequestAttachment is a file by local path or inline content.
type RequestAttachment struct {
	Name          string `json:"name"`
	Path          string `json:"path,omitempty"`
	ContentBase64 string `json:"content_base64,omitempty"`
}

// Response is the answer to POST /v1/messages.
type Response struct {
	Thread   string         `json:"thread"`
	Reply    string         `json:"reply"`
	Evidence []bot.Evidence `json:"evidence"`
	Steps    int            `json:"steps"`
	Tokens   int            `json:"tokens"`
	Failed   bool           `json:"failed,omitempty"`
}

// Ask sends a message as user in channel/thread and waits for the answer.
// With thread empty it starts a new thread. It is what the HTTP API and the
// terminal call.
func (a *Adapter) Ask(ctx context.Context, req Request, atts []bot.Attachment) (Response, error) {
	in, err := a.getInbox()
	if err != nil {
		return Response{}, err
	}
	id := a.nextID()
	m := bot.Message{
		Platform: bot.PlatformLocal, Tenant: Tenant,
		Channel: req.Channel, Thread: req.Thread, ID: id, EventID: id,
		User: req.User, Text: req.Text, Mentioned: true,
		Attachments: atts, Time: time.Now(),
	}
	if m.User == "" {
		m.User = DefaultUser
	}
	if m.Channel == "" {
		m.Channel = DefaultChannel
	}
	if m.Thread == "" {
		m.Thread = id
	}
	ch := make(chan bot.Reply, 1)
	a.mu.Lock()
	a.waiters[id] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiters, id)
		a.mu.Unlock()
	}()
	if err := in.Deliver(ctx, m); err != nil {
		return Response{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ReplyTimeout)
	defer cancel()
	select {
	case r := <-ch:
		return Response{Thread: m.Thread, Reply: r.Text, Evidence: r.Evidence, Steps: r.Steps, Tokens: r.Tokens, Failed: r.Failed}, nil
	case <-ctx.Done():
		return Response{}, fmt.Errorf("no answer yet (%w); the thread %s keeps the run", ctx.Err(), m.Thread)
	}
}

// Routes registers POST /v1/messages and GET /v1/posts.
func (a *Adapter) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/messages", a.handleMessage)
	mux.HandleFunc("GET /v1/posts", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Posts())
	})
}

func (a *Adapter) handleMessage(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, maxRequestBytes)
	var req Request
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d MiB; send large files by path", maxRequestBytes>>20))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if strings.TrimSpace(req.Text) == "" && len(req.Attachments) == 0 {
		writeError(w, http.StatusBadRequest, `"text" or "attachments" is required`)
		return
	}
	atts, err := a.attachments(r, req.Attachments)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	resp, err := a.Ask(r.Context(), req, atts)
	switch {
	case errors.Is(err, bot.ErrQueueFull):
		writeError(w, http.StatusTooManyRequests, err.Error())
	case errors.Is(err, bot.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, bot.ErrDuplicate):
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		writeError(w, http.StatusGatewayTimeout, err.Error())
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// attachments turns request attachments into bot attachments: inline
// content is spooled to disk; paths are accepted only from loopback
// clients, since they read the server's files.
func (a *Adapter) attachments(r *http.Request, in []RequestAttachment) ([]bot.Attachment, error) {
	var out []bot.Attachment
	for i, ra := range in {
		name := filepath.Base(strings.TrimSpace(ra.Name))
		switch {
		case ra.Path != "" && ra.ContentBase64 != "":
			return nil, fmt.Errorf("attachment %d: give path or content_base64, not both", i+1)
		case ra.Path != "":
			if !isLoopback(r.RemoteAddr) {
				return nil, fmt.Errorf("attachment %d: path attachments are accepted from this machine only; send content_base64", i+1)
			}
			st, err := os.Stat(ra.Path)
			if err != nil {
				return nil, fmt.Errorf("attachment %d: %w", i+1, err)
			}
			if name == "." || name == "" {
				name = filepath.Base(ra.Path)
			}
			out = append(out, bot.Attachment{Name: name, Path: ra.Path, Size: st.Size()})
		case ra.ContentBase64 != "":
			if name == "." || name == "" || name == "/" {
				return nil, fmt.Errorf("attachment %d: name is required with content_base64", i+1)
			}
			path, size, err := a.spool(ra.ContentBase64)
			if err != nil {
				return nil, fmt.Errorf("attachment %d (%s): %w", i+1, name, err)
			}
			out = append(out, bot.Attachment{Name: name, Path: path, Size: size})
		default:
			return nil, fmt.Errorf("attachment %d: path or content_base64 is required", i+1)
		}
	}
	return out, nil
}

func (a *Adapter) spool(b64 string) (string, int64, error) {
	f, err := os.CreateTemp(a.cfg.SpoolDir, "upload-*")
	if err != nil {
		return "", 0, err
	}
	dec := base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64))
	n, err := io.Copy(f, io.LimitReader(dec, a.cfg.MaxAttachmentBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > a.cfg.MaxAttachmentBytes {
		err = bot.ErrTooLarge
	}
	if err != nil {
		os.Remove(f.Name())
		if !errors.Is(err, bot.ErrTooLarge) {
			err = fmt.Errorf("content_base64: %w", err)
		}
		return "", 0, err
	}
	return f.Name(), n, nil
}

func isLoopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// Terminal runs the terminal chat on in/out until /quit, EOF or ctx ends.
// Commands: /attach PATH (attached to the next message), /new (a new
// thread), /quit.
func (a *Adapter) Terminal(ctx context.Context, in io.Reader, out io.Writer) error {
	fmt.Fprintln(out, "sleuth local chat. Attach a log with /attach PATH, then ask a question. /new starts a new thread, /quit exits.")
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var thread string
	var pending []bot.Attachment
	lines := make(chan string)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		fmt.Fprint(out, "> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case line, ok = <-lines:
			if !ok {
				return nil
			}
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case line == "/quit" || line == "/exit":
			return nil
		case line == "/new":
			thread, pending = "", nil
			fmt.Fprintln(out, "(new thread)")
			continue
		case strings.HasPrefix(line, "/attach"):
			path := strings.TrimSpace(strings.TrimPrefix(line, "/attach"))
			st, err := os.Stat(path)
			switch {
			case path == "":
				fmt.Fprintln(out, "usage: /attach PATH")
			case err != nil:
				fmt.Fprintf(out, "cannot attach: %v\n", err)
			case st.IsDir():
				fmt.Fprintf(out, "cannot attach %s: it is a directory\n", path)
			default:
				pending = append(pending, bot.Attachment{Name: filepath.Base(path), Path: path, Size: st.Size()})
				fmt.Fprintf(out, "(attached %s, %d bytes; it goes with your next message)\n", filepath.Base(path), st.Size())
			}
			continue
		case strings.HasPrefix(line, "/"):
			fmt.Fprintln(out, "commands: /attach PATH, /new, /quit")
			continue
		}
		resp, err := a.Ask(ctx, Request{Thread: thread, Text: line}, pending)
		if err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
			continue
		}
		pending = nil
		thread = resp.Thread
		fmt.Fprintf(out, "\n%s\n\n", bot.RenderText(bot.Reply{Text: resp.Reply, Evidence: resp.Evidence}))
	}
}
