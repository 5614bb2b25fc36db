package volumeid

import (
	"strings"
	"testing"
)

func TestVolume(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, c := range []struct {
		name, strategy, want string
		max                  int
		bad                  bool
	}{
		{name: "pvc-1", max: 64, want: "pvc-1"},
		{name: long, max: 64, want: strings.Repeat("a", 31) + "-" + "36a92cc94a9e0fa21f625f8bfb007adf"},
		{name: "123456789", strategy: "crc32", max: 64, want: "3421780262"},
		{name: "123456789", strategy: "crc16", max: 64, want: "47933"},
		{name: "123456789", strategy: "crc8", max: 64, want: "244"},
		{name: "any name!", strategy: "md5", max: 64, want: "947a883ebd4abbee927a0a52702785c6"},
		{name: "", max: 64, bad: true},
		{name: "a b", max: 64, bad: true},
		{name: "-a", max: 64, bad: true},
	} {
		got, err := Volume(c.name, c.strategy, c.max)
		if (err != nil) != c.bad || got != c.want && !c.bad {
			t.Errorf("Volume(%q, %q) = %q, %v; want %q (error %v)", c.name, c.strategy, got, err, c.want, c.bad)
		}
	}
}

func TestShortenKeepsNamesApart(t *testing.T) {
	a, b := strings.Repeat("x", 80)+"1", strings.Repeat("x", 80)+"2"
	sa, sb := Shorten(a, 48), Shorten(b, 48)
	if sa == sb || len(sa) != 48 || len(sb) != 48 {
		t.Fatalf("Shorten: %q %q", sa, sb)
	}
}

func TestParseStrategy(t *testing.T) {
	if s, err := ParseStrategy(" MD5 "); err != nil || s != "md5" {
		t.Fatalf("ParseStrategy(MD5) = %q, %v", s, err)
	}
	if _, err := ParseStrategy("sha1"); err == nil || !strings.Contains(err.Error(), Strategies) {
		t.Fatalf("ParseStrategy(sha1) = %v", err)
	}
}
