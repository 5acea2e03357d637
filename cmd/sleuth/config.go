package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// secretVars may be given as NAME_FILE (a path whose content is the value),
// for Kubernetes secrets mounted as files.
var secretVars = map[string]bool{
	"SLACK_APP_TOKEN": true, "SLACK_BOT_TOKEN": true, "SLACK_SIGNING_SECRET": true,
	"FEISHU_APP_SECRET": true, "FEISHU_VERIFICATION_TOKEN": true, "FEISHU_ENCRYPT_KEY": true,
	"LLM_API_KEY": true, "QDRANT_API_KEY": true, "EMBED_API_KEY": true,
}

// env reads configuration variables, resolving NAME_FILE for secrets, and
// collects validation errors that name the variable.
type env struct {
	lookup func(string) (string, bool)
	errs   []error
}

func newEnv(lookup func(string) (string, bool)) *env {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return &env{lookup: lookup}
}

// get returns the trimmed value of name (or the content of the file named
// by name_FILE for secrets).
func (e *env) get(name string) string {
	if v, ok := e.lookup(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	if secretVars[name] {
		if path, ok := e.lookup(name + "_FILE"); ok && path != "" {
			b, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				// A key absent from a mounted Secret: the secret is unset.
				return ""
			}
			if err != nil {
				e.errs = append(e.errs, fmt.Errorf("%s_FILE: %w", name, err))
				return ""
			}
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

func (e *env) str(name, def string) string {
	if v := e.get(name); v != "" {
		return v
	}
	return def
}

func (e *env) integer(name string, def, min, max int) int {
	v := e.get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want a whole number from %d to %d", name, v, min, max))
		return def
	}
	return n
}

func (e *env) duration(name string, def time.Duration) time.Duration {
	v := e.get(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want a positive duration such as 30s or 5m", name, v))
		return def
	}
	return d
}

func (e *env) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(e.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	e.errs = append(e.errs, fmt.Errorf("%s=%q: want one of %s", name, v, strings.Join(allowed, ", ")))
	return def
}

func (e *env) err() error { return errors.Join(e.errs...) }

// Config is sleuth's process configuration, read from the environment.
// Platform, model and store settings are read by their packages'
// ConfigFromEnv functions through the same env.
type Config struct {
	DataDir            string
	HTTPAddr           string
	LogLevel           string
	LogFormat          string // auto | json | text
	MaxAttachmentBytes int64
	Workers            int
	ShutdownGrace      time.Duration
	SkillsDir          string
	KBDir              string
	PersonaFile        string
	JobsFile           string
	ReportPaths        string
	OwnerChannel       string
	LocalAPI           bool // serve POST /v1/messages even with a platform configured
	LLMProvider        string
	LLMBaseURL         string
	LLMModel           string
	LLMAPIKey          string
	LLMTimeout         time.Duration
	LLMTools           string // native | json
	EmbedModel         string
	EmbedBaseURL       string
	EmbedAPIKey        string
	QdrantURL          string
	QdrantAPIKey       string
	QdrantCollection   string
}

func loadConfig(e *env) (Config, error) {
	c := Config{
		DataDir:            e.str("SLEUTH_DATA_DIR", "./data"),
		HTTPAddr:           e.str("SLEUTH_HTTP_ADDR", "127.0.0.1:8080"),
		LogLevel:           e.oneOf("SLEUTH_LOG_LEVEL", "info", "debug", "info", "warn", "error"),
		LogFormat:          e.oneOf("SLEUTH_LOG_FORMAT", "auto", "auto", "json", "text"),
		MaxAttachmentBytes: int64(e.integer("SLEUTH_MAX_ATTACHMENT_MB", 200, 1, 1<<20)) << 20,
		Workers:            e.integer("SLEUTH_WORKERS", 4, 1, 256),
		ShutdownGrace:      e.duration("SLEUTH_SHUTDOWN_GRACE", 25*time.Second),
		SkillsDir:          e.get("SLEUTH_SKILLS_DIR"),
		KBDir:              e.get("SLEUTH_KB_DIR"),
		PersonaFile:        e.get("SLEUTH_PERSONA_FILE"),
		JobsFile:           e.get("SLEUTH_JOBS_FILE"),
		ReportPaths:        e.get("SLEUTH_REPORT_PATHS"),
		OwnerChannel:       e.get("SLEUTH_OWNER_CHANNEL"),
		LocalAPI:           e.oneOf("SLEUTH_LOCAL_API", "off", "on", "off") == "on",
		LLMProvider:        e.oneOf("LLM_PROVIDER", "openai", "openai", "ollama", "anthropic"),
		LLMBaseURL:         e.get("LLM_BASE_URL"),
		LLMModel:           e.get("LLM_MODEL"),
		LLMAPIKey:          e.get("LLM_API_KEY"),
		LLMTimeout:         e.duration("LLM_TIMEOUT", 60*time.Second),
		LLMTools:           e.oneOf("LLM_TOOLS", "native", "native", "json"),
		EmbedModel:         e.get("EMBED_MODEL"),
		EmbedBaseURL:       e.get("EMBED_BASE_URL"),
		EmbedAPIKey:        e.get("EMBED_API_KEY"),
		QdrantURL:          e.get("QDRANT_URL"),
		QdrantAPIKey:       e.get("QDRANT_API_KEY"),
		QdrantCollection:   e.str("QDRANT_COLLECTION", "sleuth_memories"),
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		e.errs = append(e.errs, fmt.Errorf("SLEUTH_HTTP_ADDR=%q: want host:port such as 127.0.0.1:8080", c.HTTPAddr))
	}
	if c.LLMModel != "" && c.LLMProvider == "openai" && c.LLMBaseURL == "" && c.LLMAPIKey == "" {
		e.errs = append(e.errs, errors.New("LLM_MODEL is set but neither LLM_BASE_URL nor LLM_API_KEY is: set LLM_API_KEY for OpenAI, or LLM_BASE_URL for a compatible server"))
	}
	if c.EmbedModel != "" && c.LLMBaseURL == "" && c.EmbedBaseURL == "" && c.LLMAPIKey == "" && c.EmbedAPIKey == "" {
		e.errs = append(e.errs, errors.New("EMBED_MODEL is set but no provider is: set EMBED_BASE_URL (or LLM_BASE_URL) and a key"))
	}
	for _, dir := range []struct{ name, path string }{{"SLEUTH_SKILLS_DIR", c.SkillsDir}, {"SLEUTH_KB_DIR", c.KBDir}} {
		if dir.path == "" {
			continue
		}
		if st, err := os.Stat(dir.path); err != nil || !st.IsDir() {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a readable directory", dir.name, dir.path))
		}
	}
	for _, f := range []struct{ name, path string }{{"SLEUTH_PERSONA_FILE", c.PersonaFile}, {"SLEUTH_JOBS_FILE", c.JobsFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: %v", f.name, f.path, err))
		}
	}
	return c, e.err()
}

// LLMEnabled reports whether a model is configured.
func (c Config) LLMEnabled() bool { return c.LLMModel != "" }

// lookupResolved is a lookup over the same environment with NAME_FILE
// secrets resolved, for packages that read variables themselves.
func (e *env) lookupResolved(name string) (string, bool) {
	v := e.get(name)
	return v, v != ""
}
