package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// sniffBytes is how much of a file is inspected to tell text from binary.
const sniffBytes = 8 << 10

// storeAttachments streams this message's attachments into the session
// workspace, counting bytes and stopping at the cap. Rejections become
// notes for the person, not errors.
func (r *run) storeAttachments(ctx context.Context) error {
	m := r.turn.Message
	if len(m.Attachments) == 0 {
		return nil
	}
	existing, err := r.a.cfg.Sessions.Files(ctx, r.key)
	if err != nil {
		return fmt.Errorf("list session files: %w", err)
	}
	names := map[string]memory.File{}
	for _, f := range existing {
		names[f.Name] = f
	}
	for _, att := range m.Attachments {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := r.storeOne(ctx, att, names)
		switch {
		case err == nil:
			names[f.Name] = f
			r.newFiles = append(r.newFiles, f.Name)
		case errors.Is(err, errSameFile):
			r.newFiles = append(r.newFiles, f.Name)
		case errors.Is(err, bot.ErrTooLarge):
			r.rejected = append(r.rejected, fmt.Sprintf("I could not take **%s**: it is larger than the %s limit. Attach a smaller excerpt (for example the hour around the failure) or a gzip of it.", att.Name, skills.HumanBytes(r.a.cfg.MaxAttachmentBytes)))
		case errors.Is(err, errBinary):
			r.rejected = append(r.rejected, fmt.Sprintf("I could not take **%s**: it looks like a binary file, not a text log. Attach the log as text (or .gz / .zip).", att.Name))
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			r.log.Warn("store attachment", "file", att.Name, "error", err)
			r.rejected = append(r.rejected, fmt.Sprintf("I could not download **%s**; please attach it again.", att.Name))
		}
	}
	return nil
}

var (
	errBinary   = errors.New("binary file")
	errSameFile = errors.New("file already stored")
)

func (r *run) storeOne(ctx context.Context, att bot.Attachment, names map[string]memory.File) (memory.File, error) {
	if att.Size > r.a.cfg.MaxAttachmentBytes {
		return memory.File{}, bot.ErrTooLarge
	}
	rc, err := r.open(ctx, att)
	if err != nil {
		return memory.File{}, fmt.Errorf("open attachment: %w", err)
	}
	defer rc.Close()

	name := safeName(att.Name)
	tmp, err := os.CreateTemp(r.workspace, ".incoming-*")
	if err != nil {
		return memory.File{}, fmt.Errorf("store attachment: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op after the rename

	h := sha256.New()
	limit := r.a.cfg.MaxAttachmentBytes
	head := make([]byte, 0, sniffBytes)
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, rerr := rc.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > limit {
				tmp.Close()
				return memory.File{}, bot.ErrTooLarge
			}
			if len(head) < sniffBytes {
				head = append(head, buf[:min(k, sniffBytes-len(head))]...)
				if len(head) == sniffBytes || rerr == io.EOF {
					if looksBinary(head) {
						tmp.Close()
						return memory.File{}, errBinary
					}
				}
			}
			h.Write(buf[:k])
			if _, werr := tmp.Write(buf[:k]); werr != nil {
				tmp.Close()
				return memory.File{}, fmt.Errorf("store attachment: %w", werr)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			tmp.Close()
			return memory.File{}, fmt.Errorf("download attachment: %w", rerr)
		}
		if ctx.Err() != nil {
			tmp.Close()
			return memory.File{}, ctx.Err()
		}
	}
	if len(head) < sniffBytes && looksBinary(head) {
		tmp.Close()
		return memory.File{}, errBinary
	}
	if err := tmp.Close(); err != nil {
		return memory.File{}, fmt.Errorf("store attachment: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if prev, ok := names[name]; ok {
		if prev.SHA256 == sum {
			return prev, errSameFile
		}
		name = uniqueName(name, names)
	}
	path := filepath.Join(r.workspace, name)
	if err := os.Rename(tmpName, path); err != nil {
		return memory.File{}, fmt.Errorf("store attachment: %w", err)
	}
	f := memory.File{Session: r.key, Name: name, Path: path, Size: n, SHA256: sum, PlatformID: att.ID, CreatedAt: r.a.cfg.Clock()}
	if err := r.a.cfg.Sessions.AddFile(ctx, f); err != nil {
		return memory.File{}, fmt.Errorf("record attachment: %w", err)
	}
	metrics.AttachmentBytes.WithLabelValues(r.turn.Message.Platform).Add(float64(n))
	return f, nil
}

func (r *run) open(ctx context.Context, att bot.Attachment) (io.ReadCloser, error) {
	if r.turn.Open != nil {
		return r.turn.Open(ctx, att)
	}
	if att.Path != "" {
		return os.Open(att.Path)
	}
	return nil, errors.New("no way to open the attachment")
}

// looksBinary reports whether the head of a file is binary. gzip and zip
// archives count as text here: the engine decompresses them.
func looksBinary(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		return false
	}
	if len(head) == 0 {
		return false
	}
	if bytes.IndexByte(head, 0) >= 0 {
		// UTF-16 text has NULs; it is rare in logs and the engine rejects it
		// with a clear message, so treat it as binary here too.
		return true
	}
	ctrl := 0
	for _, c := range head {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f' && c != '\b' {
			ctrl++
		}
	}
	return ctrl*10 > len(head)
}

func safeName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '/' || r == 0x7f {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		name = "attachment.log"
	}
	return name
}

func uniqueName(name string, names map[string]memory.File) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		c := fmt.Sprintf("%s-%d%s", base, i, ext)
		if _, ok := names[c]; !ok {
			return c
		}
	}
}
