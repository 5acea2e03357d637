package logscan

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf16"
	"unicode/utf8"
)

// Reader limits. The expansion check only starts once an archive has
// produced bombGrace bytes, so small, very repetitive logs are never refused.
const (
	defaultMaxBytes     = 4 << 30  // Options.MaxBytes default
	defaultMaxLineBytes = 64 << 10 // Options.MaxLineBytes default
	maxMaxLineBytes     = 8 << 20  // upper bound on Options.MaxLineBytes
	defaultMaxRatio     = 200      // decompressed/compressed bytes
	sniffBytes          = 8 << 10  // bytes inspected by the binary sniffer
	maxControlRatio     = 0.10     // share of control bytes that makes a text binary
)

// bombGrace is how many bytes an archive may expand to before the ratio
// check applies (a variable so tests can lower it).
var bombGrace int64 = 64 << 20

// memberSep introduces each archive member after the first; it is a line
// of its own, counted like any other.
const memberSepFormat = "==> %s <=="

// source is one opened log: a decompressed text stream.
type source struct {
	r       io.Reader // text, after decompression and transcoding
	f       *os.File
	archive string // "", "gzip", "zip", "tar"
}

func (s *source) Close() error { return s.f.Close() }

// limits resolves the zero values of Options.
func (o Options) limits() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLineBytes
	}
	if o.MaxLineBytes > maxMaxLineBytes {
		o.MaxLineBytes = maxMaxLineBytes
	}
	if o.MaxLineBytes < 64 {
		o.MaxLineBytes = 64
	}
	if o.MaxRatio <= 0 {
		o.MaxRatio = defaultMaxRatio
	}
	if o.Top <= 0 {
		o.Top = 10
	}
	return o
}

// openLog opens path, sniffs its container by magic bytes (never by
// extension), and returns the text stream. Errors wrap the package's Err
// values with the file name.
func openLog(path string, opt Options) (*source, error) {
	opt = opt.limits()
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFile)
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err := openStream(f, st.Size(), opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func openStream(f *os.File, size int64, opt Options) (*source, error) {
	raw := &countingReader{r: f}
	// Plain text bypasses this buffer (the splitter reads 1 MiB at a
	// time); a compressed stream is read through it by the decompressor.
	br := bufio.NewReaderSize(raw, 256<<10)
	magic, _ := br.Peek(4)
	s := &source{f: f}
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", ErrCorrupt)
		}
		zr.Multistream(true)
		lim := &bombReader{r: &corruptReader{r: zr}, in: raw, max: opt.MaxBytes, ratio: opt.MaxRatio}
		inner := bufio.NewReaderSize(lim, 64<<10)
		if isTar(inner) {
			s.archive = "tar"
			s.r = &tarText{tr: tar.NewReader(inner), opt: opt}
			return s, nil
		}
		s.archive = "gzip"
		text, err := textStream(inner)
		if err != nil {
			return nil, err
		}
		s.r = text
		return s, nil
	case len(magic) >= 4 && magic[0] == 'P' && magic[1] == 'K' && (magic[2] == 3 || magic[2] == 5) && (magic[3] == 4 || magic[3] == 6):
		zr, err := zip.NewReader(f, size)
		if err != nil {
			return nil, fmt.Errorf("zip: %w", ErrCorrupt)
		}
		s.archive = "zip"
		zt, err := newZipText(zr, size, opt)
		if err != nil {
			return nil, err
		}
		s.r = zt
		return s, nil
	}
	if isTar(br) {
		s.archive = "tar"
		s.r = &tarText{tr: tar.NewReader(br), opt: opt}
		return s, nil
	}
	if size > opt.MaxBytes {
		return nil, ErrTooLarge
	}
	text, err := textStream(br)
	if err != nil {
		return nil, err
	}
	s.r = text
	return s, nil
}

// isTar reports whether br starts with a ustar header.
func isTar(br *bufio.Reader) bool {
	h, err := br.Peek(512)
	if err != nil || len(h) < 512 {
		return false
	}
	return bytes.HasPrefix(h[257:], []byte("ustar"))
}

// textStream checks the start of a stream and returns a UTF-8 reader:
// UTF-16 with a byte-order mark is transcoded; binary data is refused.
func textStream(br *bufio.Reader) (io.Reader, error) {
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if len(head) == 0 {
		return nil, ErrEmpty
	}
	if len(head) >= 2 && ((head[0] == 0xff && head[1] == 0xfe) || (head[0] == 0xfe && head[1] == 0xff)) {
		br.Discard(2)
		return &utf16Reader{r: br, big: head[0] == 0xfe}, nil
	}
	if len(head) >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf {
		br.Discard(3)
		head = head[3:]
	}
	if looksBinary(head) {
		return nil, ErrBinary
	}
	return br, nil
}

// looksBinary sniffs the first bytes of a decompressed stream: any NUL, or
// more than maxControlRatio control bytes other than the usual whitespace,
// backspace and the ANSI escape.
func looksBinary(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	ctl := 0
	for _, c := range b {
		switch {
		case c == 0:
			return true
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\b' && c != 0x1b:
			ctl++
		case c == 0x7f:
			ctl++
		}
	}
	if float64(ctl)/float64(len(b)) > maxControlRatio {
		return true
	}
	// A stream that is mostly invalid UTF-8 is not text either.
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 && len(b)-i >= utf8.UTFMax {
			bad++
		}
		i += n
	}
	return float64(bad)/float64(len(b)) > 0.3
}

// countingReader counts the bytes read from the file (compressed bytes for
// archives).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// bombReader refuses a decompressed stream that grows past max bytes, or
// past ratio times the compressed bytes once it is larger than bombGrace.
type bombReader struct {
	r     io.Reader
	in    *countingReader
	n     int64
	max   int64
	ratio float64
}

func (b *bombReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return n, ErrBomb
	}
	if b.n > bombGrace && b.in != nil && float64(b.n) > b.ratio*float64(max(b.in.n, 1)) {
		return n, ErrBomb
	}
	return n, err
}

// corruptReader maps decompression failures to ErrCorrupt.
type corruptReader struct{ r io.Reader }

func (c *corruptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, ErrBomb) {
			return n, err
		}
		return n, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return n, err
}

// tarText concatenates the text members of a tar stream, in order; each
// member after the first is introduced by a "==> name <==" line. Binary
// members are skipped.
type tarText struct {
	tr    *tar.Reader
	opt   Options
	cur   io.Reader
	pend  []byte // separator still to emit
	nText int
	done  bool
}

func (t *tarText) Read(p []byte) (int, error) {
	for {
		if len(t.pend) > 0 {
			n := copy(p, t.pend)
			t.pend = t.pend[n:]
			return n, nil
		}
		if t.cur != nil {
			n, err := t.cur.Read(p)
			if err == io.EOF {
				t.cur = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			if err != nil && !errors.Is(err, ErrBomb) && !errors.Is(err, ErrCorrupt) {
				err = fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			return n, err
		}
		if t.done {
			if t.nText == 0 {
				return 0, ErrNoTextLog
			}
			return 0, io.EOF
		}
		h, err := t.tr.Next()
		if err == io.EOF {
			t.done = true
			continue
		}
		if err != nil {
			if errors.Is(err, ErrBomb) || errors.Is(err, ErrCorrupt) {
				return 0, err
			}
			return 0, fmt.Errorf("tar: %w: %v", ErrCorrupt, err)
		}
		if h.Typeflag != tar.TypeReg || h.Size == 0 {
			continue
		}
		br := bufio.NewReaderSize(t.tr, 16<<10)
		text, err := textStream(br)
		if err != nil {
			if errors.Is(err, ErrBinary) || errors.Is(err, ErrEmpty) {
				continue
			}
			return 0, err
		}
		t.cur = &endNewline{r: text}
		if t.nText > 0 {
			t.pend = []byte(fmt.Sprintf(memberSepFormat, h.Name) + "\n")
		}
		t.nText++
	}
}

// newZipText checks the declared sizes of a zip's members and returns a
// reader over its text members, concatenated like tarText.
func newZipText(zr *zip.Reader, size int64, opt Options) (io.Reader, error) {
	var total uint64
	var files []*zip.File
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || f.UncompressedSize64 == 0 {
			continue
		}
		total += f.UncompressedSize64
		files = append(files, f)
	}
	if total > uint64(opt.MaxBytes) || (total > uint64(bombGrace) && float64(total) > opt.MaxRatio*float64(max(size, 1))) {
		return nil, ErrBomb
	}
	return &zipText{files: files, opt: opt, size: size}, nil
}

type zipText struct {
	files []*zip.File
	opt   Options
	size  int64
	cur   io.Reader
	rc    io.ReadCloser
	pend  []byte
	nText int
	out   int64
}

func (z *zipText) Read(p []byte) (int, error) {
	for {
		if len(z.pend) > 0 {
			n := copy(p, z.pend)
			z.pend = z.pend[n:]
			return n, nil
		}
		if z.cur != nil {
			n, err := z.cur.Read(p)
			z.out += int64(n)
			if z.out > z.opt.MaxBytes || (z.out > bombGrace && float64(z.out) > z.opt.MaxRatio*float64(max(z.size, 1))) {
				return n, ErrBomb
			}
			if err == io.EOF {
				z.rc.Close()
				z.cur = nil
				if n > 0 {
					return n, nil
				}
				continue
			}
			if err != nil {
				return n, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			return n, nil
		}
		if len(z.files) == 0 {
			if z.nText == 0 {
				return 0, ErrNoTextLog
			}
			return 0, io.EOF
		}
		f := z.files[0]
		z.files = z.files[1:]
		rc, err := f.Open()
		if err != nil {
			return 0, fmt.Errorf("zip %s: %w", f.Name, ErrCorrupt)
		}
		text, err := textStream(bufio.NewReaderSize(rc, 16<<10))
		if err != nil {
			rc.Close()
			if errors.Is(err, ErrBinary) || errors.Is(err, ErrEmpty) {
				continue
			}
			return 0, fmt.Errorf("zip %s: %w: %v", f.Name, ErrCorrupt, err)
		}
		z.rc = rc
		z.cur = &endNewline{r: text}
		if z.nText > 0 {
			z.pend = []byte(fmt.Sprintf(memberSepFormat, f.Name) + "\n")
		}
		z.nText++
	}
}

// endNewline makes sure a member ends with '\n', so the next member's
// separator starts a line of its own.
type endNewline struct {
	r     io.Reader
	last  byte
	any   bool
	state int // 0 reading, 1 newline owed, 2 done
}

func (e *endNewline) Read(p []byte) (int, error) {
	switch e.state {
	case 2:
		return 0, io.EOF
	case 1:
		if len(p) == 0 {
			return 0, nil
		}
		p[0] = '\n'
		e.state = 2
		return 1, nil
	}
	n, err := e.r.Read(p)
	if n > 0 {
		e.last = p[n-1]
		e.any = true
	}
	if err == io.EOF {
		if e.any && e.last != '\n' {
			e.state = 1
			return n, nil
		}
		e.state = 2
	}
	return n, err
}

// utf16Reader transcodes UTF-16 (after its byte-order mark) to UTF-8.
type utf16Reader struct {
	r     io.Reader
	big   bool
	buf   []byte
	pend  []byte
	carry []byte
	err   error
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.pend) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		if u.buf == nil {
			u.buf = make([]byte, 32<<10)
		}
		n := copy(u.buf, u.carry)
		m, err := u.r.Read(u.buf[n:])
		n += m
		u.err = err
		even := n &^ 1
		units := make([]uint16, 0, even/2)
		for i := 0; i+1 < even; i += 2 {
			if u.big {
				units = append(units, uint16(u.buf[i])<<8|uint16(u.buf[i+1]))
			} else {
				units = append(units, uint16(u.buf[i+1])<<8|uint16(u.buf[i]))
			}
		}
		// Keep a trailing high surrogate for the next round.
		if len(units) > 0 && utf16.IsSurrogate(rune(units[len(units)-1])) && units[len(units)-1] < 0xdc00 && err == nil {
			units = units[:len(units)-1]
			even -= 2
		}
		u.carry = append(u.carry[:0], u.buf[even:n]...)
		out := make([]byte, 0, len(units)*2)
		for _, r := range utf16.Decode(units) {
			out = utf8.AppendRune(out, r)
		}
		u.pend = out
		if err != nil && len(out) == 0 {
			return 0, err
		}
	}
	n := copy(p, u.pend)
	u.pend = u.pend[n:]
	return n, nil
}
