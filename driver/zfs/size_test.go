package zfs

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"16384", 16384, false}, {"16K", 16384, false}, {"16k", 16384, false}, {"512B", 512, false},
		{"1M", 1 << 20, false}, {"1.5G", 3 << 29, false}, {"1T", 1 << 40, false}, {"0", 0, false},
		{"", 0, true}, {"K", 0, true}, {"-1", 0, true}, {"1.5", 0, true}, {"abc", 0, true}, {"9999999E", 0, true},
	} {
		got, err := ParseSize(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}
