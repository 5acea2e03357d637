package logscan

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// tapeMem is how many per-line cluster numbers a tape holds in memory
// (4 bytes each) before it spills the rest to a temporary file (a
// variable so tests can make it spill).
var tapeMem = 8 << 20

// tape records one cluster number per physical line, so templates can be
// printed after the miner's final merge. Memory is bounded by tapeMem; the
// rest goes to a temporary file removed by close.
type tape struct {
	only bool // templates only: the engine skips its statistics
	mem  []int32
	f    *os.File
	w    *bufio.Writer
	err  error
	buf  [4]byte
}

func newTape(only bool) *tape { return &tape{only: only} }

func (t *tape) add(c int32) {
	if len(t.mem) < tapeMem {
		t.mem = append(t.mem, c)
		return
	}
	if t.err != nil {
		return
	}
	if t.f == nil {
		f, err := os.CreateTemp("", "sleuth-tape-*")
		if err != nil {
			t.err = err
			return
		}
		t.f, t.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	binary.LittleEndian.PutUint32(t.buf[:], uint32(c))
	if _, err := t.w.Write(t.buf[:]); err != nil {
		t.err = err
	}
}

// each calls fn for every recorded cluster number in order, with its
// 1-based position.
func (t *tape) each(fn func(line int, c int32) error) error {
	return t.chunks(64<<10, func(first int, cs []int32) error {
		for k, c := range cs {
			if err := fn(first+k, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// chunks calls fn with the recorded cluster numbers in order, up to n at
// a time; first is the 1-based position of cs[0]. fn owns cs: it may keep
// it after returning.
func (t *tape) chunks(n int, fn func(first int, cs []int32) error) error {
	if t.err != nil {
		return t.err
	}
	for i := 0; i < len(t.mem); i += n {
		if err := fn(i+1, t.mem[i:min(i+n, len(t.mem)):min(i+n, len(t.mem))]); err != nil {
			return err
		}
	}
	if t.f == nil {
		return nil
	}
	if err := t.w.Flush(); err != nil {
		return err
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(t.f, 1<<20)
	line := len(t.mem)
	buf := make([]byte, 4*n)
	for {
		m, err := io.ReadFull(r, buf)
		m -= m % 4
		if m > 0 {
			cs := make([]int32, m/4)
			for k := range cs {
				cs[k] = int32(binary.LittleEndian.Uint32(buf[4*k:]))
			}
			if err := fn(line+1, cs); err != nil {
				return err
			}
			line += len(cs)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (t *tape) close() {
	if t.f != nil {
		t.f.Close()
		os.Remove(t.f.Name())
		t.f = nil
	}
	t.mem = nil
}
