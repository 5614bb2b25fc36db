package infinia

import (
	"strings"
	"testing"
)

func TestParseHandle(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		want handle
	}{
		{"clu1/red/csiAccount:red/csiService/pvc-red-1234", true, handle{acctKey, "red", "csiService", "pvc-red-1234"}},
		{"c/t/a:s/svc/vol.1_x-y", true, handle{"c/t/a", "s", "svc", "vol.1_x-y"}},
		{"c/t/a:s/svc/" + strings.Repeat("v", 128), true, handle{"c/t/a", "s", "svc", strings.Repeat("v", 128)}},
		{"c/t/a:s/svc/" + strings.Repeat("v", 129), false, handle{}},
		{"", false, handle{}},
		{"pvc-123", false, handle{}},
		{"c/t/a", false, handle{}},
		{"c/t:s/svc/vol", false, handle{}},
		{"c/t/a:s/vol", false, handle{}},
		{"c/t/a:s/svc/vol/extra", false, handle{}},
		{"c/t/a:s//vol", false, handle{}},
		{"c/t/a:../svc/vol", false, handle{}},
		{"c/t/a:s/svc/-vol", false, handle{}},
		{"c/t/a:s/svc/vol:x", false, handle{}},
		{"c/t/a:s/svc/", false, handle{}},
		{"c//a:s/svc/vol", false, handle{}},
		{"c/t/a:s\x00/svc/vol", false, handle{}},
	}
	for _, tc := range cases {
		got, ok := parseHandle(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseHandle(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.in {
			t.Errorf("%q formats back as %q", tc.in, got.String())
		}
	}
}

func FuzzParseHandle(f *testing.F) {
	for _, s := range []string{"clu1/red/csiAccount:red/csiService/pvc-red-1", "a/b/c:d/e/f", "::", "a/b/c:d/e/", "a/b/c:../e/f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := parseHandle(s)
		if !ok {
			return
		}
		if h.String() != s {
			t.Fatalf("%q formats back as %q", s, h.String())
		}
		if h2, ok2 := parseHandle(h.String()); !ok2 || h2 != h {
			t.Fatalf("%q does not parse back", h.String())
		}
	})
}

func TestNewHandle(t *testing.T) {
	long := "pvc-" + strings.Repeat("a", 120)
	cases := []struct {
		name, acct, sub, svc, vol string
		wantVol                   string // "" = error expected
		errPart                   string
	}{
		{"fits", acctKey, "red", "csiService", "pvc-red-1", "pvc-red-1", ""},
		{"shortened", acctKey, "red", "csiService", long, "", ""},
		{"bad chars", acctKey, "red", "csiService", "pvc/1", "", "invalid characters"},
		{"no room", "c/t/" + strings.Repeat("a", 60), "s", "svc", long, "", "shorter account"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newHandle(tc.acct, tc.sub, tc.svc, tc.vol)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("want an error containing %q, got %v (%s)", tc.errPart, err, h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(h.String()) > MaxVolumeIDLen {
				t.Fatalf("handle %s is %d bytes, over %d", h, len(h.String()), MaxVolumeIDLen)
			}
			if tc.wantVol != "" && h.volume != tc.wantVol {
				t.Fatalf("volume %q, want %q", h.volume, tc.wantVol)
			}
			if _, ok := parseHandle(h.String()); !ok {
				t.Fatalf("made handle %q does not parse", h)
			}
		})
	}
	// Shortening keeps distinct names distinct.
	a, _ := newHandle(acctKey, "red", "csiService", long+"x")
	b, _ := newHandle(acctKey, "red", "csiService", long+"y")
	if a == b {
		t.Fatalf("two long names shortened to the same handle %s", a)
	}
}
