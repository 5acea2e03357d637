package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/memory/qdrant"
)

const memoryUsage = `Usage:
  sleuth memory list   --tenant T [--user U] [--channel C] [--type TYPE] [--limit N] [--json]
  sleuth memory search --tenant T [--user U] [--channel C] [--type TYPE] [--limit N] [--json] TEXT
  sleuth memory forget --tenant T [--user U] [--channel C] (ID... | --query TEXT | --all)

The scope is enforced as in the bot: --user shows that user's memories
(memories made in a DM only without --channel), --channel that channel's.
Reads SLEUTH_DATA_DIR (default ./data), QDRANT_URL / QDRANT_API_KEY /
QDRANT_COLLECTION, and EMBED_MODEL / EMBED_BASE_URL / EMBED_API_KEY
(falling back to LLM_BASE_URL / LLM_API_KEY).
`

// cmdMemory runs "sleuth memory list|search|forget".
func cmdMemory(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, memoryUsage)
		return 0
	}
	verb := args[0]
	fs := flag.NewFlagSet("sleuth memory "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sc memory.Scope
	fs.StringVar(&sc.Tenant, "tenant", "", "tenant (workspace) id (required)")
	fs.StringVar(&sc.User, "user", "", "user id")
	fs.StringVar(&sc.Channel, "channel", "", "channel id")
	typ := fs.String("type", "", "only this type: preference, fact, incident, task_result")
	limit := fs.Int("limit", 20, "at most this many (0: all)")
	asJSON := fs.Bool("json", false, "print JSON lines")
	query := fs.String("query", "", "forget: the best matches of this text (at most five)")
	all := fs.Bool("all", false, "forget: every memory of the scope")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	if err := sc.Validate(); err != nil {
		fmt.Fprintf(stderr, "sleuth memory: %v (give --tenant and --user and/or --channel)\n\n%s", err, memoryUsage)
		return 2
	}
	var types []string
	if *typ != "" {
		if !memory.ValidType(*typ) {
			fmt.Fprintf(stderr, "sleuth memory: --type %q is not preference, fact, incident or task_result\n", *typ)
			return 2
		}
		types = []string{*typ}
	}
	switch verb {
	case "list", "search", "forget":
	default:
		fmt.Fprintf(stderr, "sleuth memory: unknown command %q\n\n%s", verb, memoryUsage)
		return 2
	}

	getenv := newEnv(nil).get
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := memory.Open(ctx, memory.Config{DataDir: getenv("SLEUTH_DATA_DIR"), Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "sleuth memory: %v\n", err)
		return 1
	}
	defer db.Close()
	store, where, err := openLongTerm(ctx, db, getenv, log)
	if err != nil {
		fmt.Fprintf(stderr, "sleuth memory: %v\n", err)
		return 1
	}
	defer store.Close()

	print := func(recs []memory.Record, scores []float32) {
		for i, r := range recs {
			if *asJSON {
				out := struct {
					memory.Record
					Score float32 `json:"score,omitempty"`
				}{Record: r}
				if i < len(scores) {
					out.Score = scores[i]
				}
				b, _ := json.Marshal(out)
				fmt.Fprintln(stdout, string(b))
				continue
			}
			line := r.Line()
			if i < len(scores) {
				line += fmt.Sprintf(" score %.2f", scores[i])
			}
			fmt.Fprintln(stdout, line)
		}
	}
	switch verb {
	case "list":
		recs, err := store.List(ctx, memory.Filter{Scope: sc, Types: types}, *limit)
		if err != nil {
			fmt.Fprintf(stderr, "sleuth memory list (%s): %v\n", where, err)
			return 1
		}
		print(recs, nil)
		if len(recs) == 0 && !*asJSON {
			fmt.Fprintln(stderr, "no memories in this scope")
		}
	case "search":
		text := strings.Join(pos, " ")
		if strings.TrimSpace(text) == "" {
			fmt.Fprintf(stderr, "sleuth memory search: TEXT is required\n\n%s", memoryUsage)
			return 2
		}
		hits, err := store.Search(ctx, memory.Query{Scope: sc, Text: text, Types: types, Limit: max(*limit, 1)})
		if err != nil {
			fmt.Fprintf(stderr, "sleuth memory search (%s): %v\n", where, err)
			return 1
		}
		recs, scores := make([]memory.Record, len(hits)), make([]float32, len(hits))
		for i, h := range hits {
			recs[i], scores[i] = h.Record, h.Score
		}
		print(recs, scores)
		if len(hits) == 0 && !*asJSON {
			fmt.Fprintln(stderr, "no memories match")
		}
	case "forget":
		return forgetCLI(ctx, store, sc, types, pos, *query, *all, stdout, stderr, print)
	}
	return 0
}

func forgetCLI(ctx context.Context, store memory.LongTerm, sc memory.Scope, types, ids []string, query string, all bool,
	stdout, stderr io.Writer, print func([]memory.Record, []float32)) int {
	given := 0
	for _, b := range []bool{len(ids) > 0, query != "", all} {
		if b {
			given++
		}
	}
	if given != 1 {
		fmt.Fprintf(stderr, "sleuth memory forget: give IDs, --query TEXT or --all\n\n%s", memoryUsage)
		return 2
	}
	var victims []memory.Record
	switch {
	case query != "":
		hits, err := store.Search(ctx, memory.Query{Scope: sc, Text: query, Types: types, Limit: 5})
		if err != nil {
			fmt.Fprintf(stderr, "sleuth memory forget: %v\n", err)
			return 1
		}
		for _, h := range hits {
			victims = append(victims, h.Record)
		}
	default:
		recs, err := store.List(ctx, memory.Filter{Scope: sc, Types: types}, 0)
		if err != nil {
			fmt.Fprintf(stderr, "sleuth memory forget: %v\n", err)
			return 1
		}
		for _, r := range recs {
			if all || matchesAny(r.ID, ids) {
				victims = append(victims, r)
			}
		}
	}
	if len(victims) == 0 {
		fmt.Fprintln(stderr, "nothing to forget: no memory in this scope matches")
		return 1
	}
	vids := make([]string, len(victims))
	for i, r := range victims {
		vids[i] = r.ID
	}
	n, err := store.Delete(ctx, memory.Filter{Scope: sc, IDs: vids})
	if err != nil {
		fmt.Fprintf(stderr, "sleuth memory forget: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "forgot %d:\n", n)
	print(victims, nil)
	return 0
}

// matchesAny reports whether id equals or starts with one of the given
// ids (8 characters at least).
func matchesAny(id string, ids []string) bool {
	for _, p := range ids {
		if p == id || (len(p) >= 8 && strings.HasPrefix(id, p)) {
			return true
		}
	}
	return false
}

// newEmbedder returns the model embedder when EMBED_MODEL is set (through
// EMBED_BASE_URL or LLM_BASE_URL, EMBED_API_KEY or LLM_API_KEY), the
// offline hash embedder otherwise.
func newEmbedder(ctx context.Context, getenv func(string) string) (memory.Embedder, error) {
	model := getenv("EMBED_MODEL")
	if model == "" {
		return memory.NewHashEmbedder(0)
	}
	base := getenv("EMBED_BASE_URL")
	if base == "" {
		base = getenv("LLM_BASE_URL")
	}
	key := getenv("EMBED_API_KEY")
	if key == "" {
		key = getenv("LLM_API_KEY")
	}
	e, err := memory.NewLLMEmbedder(ctx, memory.LLMEmbedderConfig{Model: model, BaseURL: base, APIKey: key})
	if err != nil {
		return nil, fmt.Errorf("EMBED_MODEL=%s: %w", model, err)
	}
	return e, nil
}

// openLongTerm opens the long-term store the environment asks for: Qdrant
// when QDRANT_URL is set (QDRANT_API_KEY, QDRANT_COLLECTION), the embedded
// store in db otherwise. It returns the store and a short description.
// The bot wraps a Qdrant store in memory.NewResilient; the CLI does not,
// so that errors show.
func openLongTerm(ctx context.Context, db *memory.DB, getenv func(string) string, log *slog.Logger) (memory.LongTerm, string, error) {
	emb, err := newEmbedder(ctx, getenv)
	if err != nil {
		return nil, "", err
	}
	if u := getenv("QDRANT_URL"); u != "" {
		s, err := qdrant.New(qdrant.Config{URL: u, APIKey: getenv("QDRANT_API_KEY"), Collection: getenv("QDRANT_COLLECTION"), Embedder: emb, Logger: log})
		if err != nil {
			return nil, "", err
		}
		return s, "qdrant (" + emb.Name() + ")", nil
	}
	s, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: emb, Logger: log})
	if err != nil {
		if errors.Is(err, memory.ErrDimension) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("long-term memory: %w", err)
	}
	return s, "embedded (" + emb.Name() + ")", nil
}
