package logscan

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// blockBytes is the read size of the splitter: lines of one block share one
// string, so splitting allocates per block, not per line. A variable so
// tests can make blocks tiny and cut events at every possible place.
var blockBytes = 1 << 20

// splitter cuts a text stream into physical lines: '\n' ends a line, a
// "\r\n" is one line end, a lone '\r' is kept. Invalid UTF-8 is replaced
// with U+FFFD. A line longer than maxLine is cut with a marker; the rest
// of it is skipped without being held in memory.
type splitter struct {
	r       io.Reader
	buf     []byte
	n       int
	maxLine int
	eof     bool
	bytes   int64 // bytes read from r

	skipping bool   // inside an over-long line
	head     string // kept part of the over-long line
	cut      int64  // bytes skipped so far

	// getBuf, when set, makes chunk hand out its read buffer: the region
	// is a view of it (no copy) and the caller recycles it once no line
	// of it is in use; getBuf supplies the next read buffer.
	getBuf func() ([]byte, error)
}

func newSplitter(r io.Reader, maxLine int) *splitter {
	size := max(blockBytes, 2*maxLine)
	return &splitter{r: r, buf: make([]byte, size), maxLine: maxLine}
}

// cutMarker is appended to a line that was cut.
func cutMarker(n int64) string { return fmt.Sprintf(" …[line cut: %d more bytes]", n) }

// next appends the next lines to dst (at least one unless the stream has
// ended) and returns it; io.EOF when the stream is done. Errors of the
// underlying reader are returned as they are.
func (s *splitter) next(dst []string) ([]string, error) {
	lines, region, _, err := s.chunk(dst)
	if region != "" {
		lines = splitLines(lines, region, s.maxLine)
	}
	return lines, err
}

// chunk returns the next lines, either split (appended to dst) or as one
// region of whole lines still to be split with splitLines, so the
// splitting can run on another goroutine. It returns io.EOF when the
// stream is done. Errors of the underlying reader are returned as they are.
// With getBuf set, owned is the buffer the region views; it must not be
// written until no string of the region is in use.
func (s *splitter) chunk(dst []string) (lines []string, region string, owned []byte, err error) {
	for {
		if !s.eof && s.n < len(s.buf) {
			for s.n < len(s.buf) {
				m, err := s.r.Read(s.buf[s.n:])
				s.n += m
				s.bytes += int64(m)
				if err == io.EOF {
					s.eof = true
					break
				}
				if err != nil {
					return dst, "", nil, err
				}
				if m == 0 {
					break
				}
			}
		}
		data := s.buf[:s.n]
		if s.skipping {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				s.cut += int64(len(data))
				s.n = 0
				if s.eof {
					s.skipping = false
					return append(dst, s.head+cutMarker(s.cut)), "", nil, nil
				}
				continue
			}
			s.cut += int64(i)
			if i > 0 && data[i-1] == '\r' {
				s.cut--
			}
			dst = append(dst, s.head+cutMarker(s.cut))
			s.skipping = false
			s.n = copy(s.buf, data[i+1:])
			return dst, "", nil, nil
		}
		if len(data) == 0 {
			if s.eof {
				return dst, "", nil, io.EOF
			}
			continue
		}
		j := bytes.LastIndexByte(data, '\n')
		if j < 0 {
			if s.eof {
				region := string(data)
				s.n = 0
				return dst, region, nil, nil
			}
			if s.n < len(s.buf) {
				continue
			}
			// One line fills the whole buffer: keep its head, skip the rest.
			s.head = validHead(data, s.maxLine)
			s.cut = int64(len(data) - len(s.head))
			s.skipping = true
			s.n = 0
			continue
		}
		if s.getBuf != nil {
			nb, err := s.getBuf()
			if err != nil {
				return dst, "", nil, err
			}
			owned = s.buf
			s.buf = nb[:len(owned)]
			s.n = copy(s.buf, data[j+1:])
			return dst, unsafe.String(&data[0], j+1), owned, nil
		}
		region := string(data[:j+1])
		s.n = copy(s.buf, data[j+1:])
		return dst, region, nil, nil
	}
}

// splitLines appends the lines of a region that ends with '\n' (or the
// final bytes of the stream) to dst.
func splitLines(dst []string, region string, maxLine int) []string {
	it := newLineIter(region, maxLine)
	for {
		ln, ok := it.next()
		if !ok {
			return dst
		}
		dst = append(dst, ln)
	}
}

// lineIter walks the lines of a region that ends with '\n' (or the final
// bytes of the stream): CR before LF dropped, invalid UTF-8 replaced, lines
// longer than maxLine cut with a marker.
type lineIter struct {
	region  string
	valid   bool
	maxLine int
}

func newLineIter(region string, maxLine int) lineIter {
	return lineIter{region: region, valid: utf8.ValidString(region), maxLine: maxLine}
}

// newLineIterFlags is newLineIter for a region whose scanFlags are f: with
// no byte outside ASCII it is valid UTF-8 without a check.
func newLineIterFlags(region string, maxLine int, f uint8) lineIter {
	return lineIter{region: region, valid: f&flagHigh == 0 || utf8.ValidString(region), maxLine: maxLine}
}

func (it *lineIter) next() (string, bool) {
	if len(it.region) == 0 {
		return "", false
	}
	i := strings.IndexByte(it.region, '\n')
	var ln string
	if i < 0 {
		ln, it.region = it.region, ""
	} else {
		ln, it.region = it.region[:i], it.region[i+1:]
	}
	if len(ln) > 0 && ln[len(ln)-1] == '\r' {
		ln = ln[:len(ln)-1]
	}
	if !it.valid && !utf8.ValidString(ln) {
		ln = strings.ToValidUTF8(ln, "\uFFFD")
	}
	if len(ln) > it.maxLine {
		h := validHead([]byte(ln), it.maxLine)
		ln = h + cutMarker(int64(len(ln)-len(h)))
	}
	return ln, true
}

// validHead returns at most n bytes of b as a string, not splitting a
// UTF-8 sequence, with invalid bytes replaced.
func validHead(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		k := len(b) - 1
		for k > 0 && len(b)-k < utf8.UTFMax && !utf8.RuneStart(b[k]) {
			k--
		}
		if k >= 0 && !utf8.FullRune(b[k:]) {
			b = b[:k]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
