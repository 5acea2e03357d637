package logscan

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// analyzeText analyses text written to a file of the given name.
func analyzeText(t testing.TB, name, text string, top int) *Report {
	t.Helper()
	rep, err := Analyze(context.Background(), []string{writeFile(t, name, []byte(text))}, Options{Top: top})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func gz(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func scanAll(t testing.TB, path string, opt Options) ([]string, error) {
	var lines []string
	err := Scan(context.Background(), path, opt, func(n int, s string) error {
		if n != len(lines)+1 {
			t.Fatalf("line %d after %d lines", n, len(lines))
		}
		lines = append(lines, s)
		return nil
	})
	return lines, err
}

func TestScanLineEnds(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"lone cr is not a break", "progress 10%\rprogress 100%\ndone\n", []string{"progress 10%\rprogress 100%", "done"}},
		{"blank lines count", "a\n\n\nb\n", []string{"a", "", "", "b"}},
		{"invalid utf8 replaced", "ok \xff\xfe end\n", []string{"ok \uFFFD end"}},
		{"utf8 bom", "\xef\xbb\xbfhello\n", []string{"hello"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := scanAll(t, writeFile(t, "x.log", []byte(c.in)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
}

func TestScanUTF16(t *testing.T) {
	in := []byte{0xff, 0xfe}
	for _, r := range "héllo\nworld\n" {
		in = append(in, byte(r), byte(r>>8))
	}
	got, err := scanAll(t, writeFile(t, "w.log", in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "héllo" || got[1] != "world" {
		t.Fatalf("got %q", got)
	}
}

func TestScanLongLineIsCutWithoutHoldingIt(t *testing.T) {
	const big = 50 << 20
	var b bytes.Buffer
	b.WriteString("first\n")
	b.Write(bytes.Repeat([]byte("x"), big))
	b.WriteString("\nlast\n")
	p := writeFile(t, "long.log", b.Bytes())
	b.Reset()
	got, err := scanAll(t, p, Options{MaxLineBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "first" || got[2] != "last" {
		t.Fatalf("lines: %d", len(got))
	}
	if !strings.HasPrefix(got[1], strings.Repeat("x", 1000)+" …[line cut: ") || len(got[1]) > 1100 {
		t.Fatalf("long line not cut: %q…", got[1][:50])
	}
	if !strings.Contains(got[1], "52427800 more bytes") {
		t.Fatalf("marker should count the cut bytes: %q", got[1][1000:])
	}
}

func TestScanCutKeepsRunes(t *testing.T) {
	line := strings.Repeat("é", 100) // 200 bytes
	got, err := scanAll(t, writeFile(t, "r.log", []byte(line+"\n")), Options{MaxLineBytes: 65})
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(got[0]) || strings.Contains(got[0], "\uFFFD") {
		t.Fatalf("cut split a rune: %q", got[0])
	}
}

func TestArchives(t *testing.T) {
	text := []byte("one\ntwo\n")
	t.Run("gzip", func(t *testing.T) {
		got, err := scanAll(t, writeFile(t, "a.txt", gz(t, text)), Options{})
		if err != nil || strings.Join(got, ",") != "one,two" {
			t.Fatalf("%q %v", got, err)
		}
	})
	t.Run("zip", func(t *testing.T) {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create("app.log")
		w.Write(text)
		w, _ = zw.Create("core.bin")
		w.Write([]byte{0, 1, 2, 3, 0, 0})
		w, _ = zw.Create("b.log")
		w.Write([]byte("three"))
		zw.Close()
		got, err := scanAll(t, writeFile(t, "logs.log", b.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "one,two,==> b.log <==,three"
		if strings.Join(got, ",") != want {
			t.Fatalf("got %q want %q", strings.Join(got, ","), want)
		}
	})
	t.Run("tar.gz", func(t *testing.T) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, m := range []struct{ name, body string }{{"x/a.log", "one\ntwo"}, {"x/b.log", "three\n"}} {
			tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.body)), Typeflag: tar.TypeReg})
			tw.Write([]byte(m.body))
		}
		tw.Close()
		got, err := scanAll(t, writeFile(t, "bundle", gz(t, b.Bytes())), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := "one,two,==> x/b.log <==,three"
		if strings.Join(got, ",") != want {
			t.Fatalf("got %q want %q", strings.Join(got, ","), want)
		}
	})
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := gz(t, bytes.Repeat([]byte("line of text\n"), 1000))
	corrupt[len(corrupt)/2] ^= 0xff
	truncated := gz(t, bytes.Repeat([]byte("line of text\n"), 1000))
	truncated = truncated[:len(truncated)-10]
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	var onlyBin bytes.Buffer
	zw := zip.NewWriter(&onlyBin)
	w, _ := zw.Create("a.so")
	w.Write(bin)
	zw.Close()

	cases := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.log"), fs.ErrNotExist},
		{"directory", dir, ErrNotFile},
		{"empty", writeFile(t, "e.log", nil), ErrEmpty},
		{"binary", writeFile(t, "b.log", bin), ErrBinary},
		{"corrupted gzip", writeFile(t, "c.gz", corrupt), ErrCorrupt},
		{"truncated gzip", writeFile(t, "t.gz", truncated), ErrCorrupt},
		{"zip without text", writeFile(t, "z.zip", onlyBin.Bytes()), ErrNoTextLog},
		{"gzip of nothing", writeFile(t, "n.gz", gz(t, nil)), ErrEmpty},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scanAll(t, c.path, Options{})
			if !errors.Is(err, c.want) {
				t.Fatalf("Scan: got %v, want %v", err, c.want)
			}
			_, err = Analyze(context.Background(), []string{c.path}, Options{})
			if !errors.Is(err, c.want) {
				t.Fatalf("Analyze: got %v, want %v", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("message is not one line: %q", err)
			}
		})
	}
}

func TestBomb(t *testing.T) {
	old := bombGrace
	bombGrace = 1 << 20
	defer func() { bombGrace = old }()
	data := bytes.Repeat([]byte("aaaaaaaaaaaaaaa\n"), 1<<20) // 16 MiB, compresses > 200x
	p := writeFile(t, "bomb.gz", gz(t, data))
	if _, err := scanAll(t, p, Options{}); !errors.Is(err, ErrBomb) {
		t.Fatalf("ratio: got %v", err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("a.log")
	w.Write(data)
	zw.Close()
	if _, err := scanAll(t, writeFile(t, "bomb.zip", b.Bytes()), Options{}); !errors.Is(err, ErrBomb) {
		t.Fatalf("zip ratio: got %v", err)
	}
	// The size cap applies whatever the ratio.
	bombGrace = old
	if _, err := scanAll(t, p, Options{MaxBytes: 1 << 20}); !errors.Is(err, ErrBomb) {
		t.Fatalf("size cap: got %v", err)
	}
	if _, err := scanAll(t, writeFile(t, "plain.log", data[:4<<20]), Options{MaxBytes: 1 << 20}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("plain size cap: got %v", err)
	}
}

// FuzzScan checks the reader's invariants on arbitrary bytes: no panic,
// line numbers are dense, lines are valid UTF-8 without '\n', and a plain
// text input yields as many lines as grep -c ” would count.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"a\nb", "a\r\nb\r\n", "x\ry\n", "\xff\xfe\x00a", "\x1f\x8b\x08\x00", "PK\x03\x04", "", "\n\n"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("testdata/java-causedby.log"); err == nil {
		f.Add(b[:min(len(b), 2000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.log")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lines, err := scanAll(t, p, Options{MaxLineBytes: 100})
		if err != nil {
			return
		}
		for _, l := range lines {
			if !utf8.ValidString(l) || strings.Contains(l, "\n") {
				t.Fatalf("bad line %q", l)
			}
		}
		plain := len(data) > 0 && !looksBinary(data[:min(len(data), sniffBytes)]) && data[0] != 0x1f && data[0] != 'P' && data[0] != 0xff && data[0] != 0xfe && data[0] != 0xef
		if plain {
			want := bytes.Count(data, []byte("\n"))
			if data[len(data)-1] != '\n' {
				want++
			}
			if len(lines) != want {
				t.Fatalf("%d lines, want %d", len(lines), want)
			}
		}
		// The engine must not panic on what the reader accepts.
		if _, err := Analyze(context.Background(), []string{p}, Options{}); err != nil && !errors.Is(err, ErrEmpty) {
			t.Fatalf("Analyze: %v", err)
		}
	})
}
