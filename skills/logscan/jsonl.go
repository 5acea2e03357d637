package logscan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// WriteTemplatesJSONL writes one JSON object per physical line of path, in
// order: {"line":N,"template_id":"…","template":"…"}. It is Templates with
// the encoding done once per template instead of once per line.
func WriteTemplatesJSONL(ctx context.Context, path string, opt Options, w io.Writer) error {
	e, ids, texts, err := mineFile(ctx, path, opt)
	if err != nil {
		return err
	}
	defer e.tape.close()
	tails := make([][]byte, len(ids))
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
	bw := bufio.NewWriterSize(w, 1<<20)
	var num []byte
	err = e.tape.each(func(line int, c int32) error {
		t := blank
		if c != blankCluster {
			if tails[c] == nil {
				tails[c] = tail(ids[c], texts[c])
			}
			t = tails[c]
		}
		num = strconv.AppendInt(append(num[:0], `{"line":`...), int64(line), 10)
		bw.Write(num)
		_, err := bw.Write(t)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
