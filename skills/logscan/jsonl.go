package logscan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// jsonlChunk is how many lines one formatter turns into JSON at a time
// (a variable so tests can make chunks tiny).
var jsonlChunk = 8 << 10

// WriteTemplatesJSONL writes one JSON object per physical line of path, in
// order: {"line":N,"template_id":"…","template":"…"}. It is Templates with
// the encoding done once per template instead of once per line, and the
// lines formatted in chunks on GOMAXPROCS goroutines while one writes them
// out in order.
func WriteTemplatesJSONL(ctx context.Context, path string, opt Options, w io.Writer) error {
	e, ids, texts, err := mineFile(ctx, path, opt)
	if err != nil {
		return err
	}
	defer e.tape.close()
	tail := func(id, text string) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // templates keep a readable <*>
		_ = enc.Encode(struct {
			ID   string `json:"template_id"`
			Text string `json:"template"`
		}{id, text})
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		out := append([]byte{','}, b[1:]...)
		return append(out, '\n')
	}
	blank := tail(miner.TemplateID(""), "")
	tails := make([][]byte, len(ids))
	for c := range ids {
		tails[c] = tail(ids[c], texts[c])
	}

	type chunk struct {
		first int
		cs    []int32
		out   []byte
		done  chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	// At most 2*workers+1 chunks are in flight: memory stays bounded.
	work := make(chan *chunk, workers)
	order := make(chan *chunk, workers)
	eg, gctx := errgroup.WithContext(ctx)
	eg.Go(func() error {
		defer close(order)
		defer close(work)
		return e.tape.chunks(jsonlChunk, func(first int, cs []int32) error {
			c := &chunk{first: first, cs: cs, done: make(chan struct{})}
			select {
			case order <- c:
			case <-gctx.Done():
				return gctx.Err()
			}
			work <- c
			return nil
		})
	})
	for range workers {
		eg.Go(func() error {
			for c := range work {
				out := make([]byte, 0, len(c.cs)*96)
				for k, cl := range c.cs {
					t := blank
					if cl != blankCluster {
						t = tails[cl]
					}
					out = strconv.AppendInt(append(out, `{"line":`...), int64(c.first+k), 10)
					out = append(out, t...)
				}
				c.out = out
				close(c.done)
			}
			return nil
		})
	}
	eg.Go(func() error {
		bw := bufio.NewWriterSize(w, 1<<20)
		for c := range order {
			select {
			case <-c.done:
			case <-gctx.Done():
				return gctx.Err()
			}
			if _, err := bw.Write(c.out); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	return eg.Wait()
}
