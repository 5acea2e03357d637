package skills

import "testing"

func TestHumanBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{25 << 20, "25 MiB"},
		{10<<20 - 1, "10 MiB"}, // rounds up, never "10.0"
		{3 << 29, "1.5 GiB"},
		{5 << 40, "5120 GiB"},
	} {
		if got := HumanBytes(c.n); got != c.want {
			t.Errorf("HumanBytes(%d) = %q; want %q", c.n, got, c.want)
		}
	}
}
