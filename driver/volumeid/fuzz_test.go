package volumeid

import (
	"strings"
	"testing"
)

// FuzzVolume: an id is at most max bytes, deterministic, in the volume
// alphabet (or a hash's digits), the name itself when that fits, and keeps
// the name's start when shortened; a refused name gets an error.
func FuzzVolume(f *testing.F) {
	for _, s := range []string{"pvc-1", "pvc-" + strings.Repeat("a", 200), "a/b", "-x", "", "ü", "pvc_1"} {
		f.Add(s, "", uint8(63))
		f.Add(s, "md5", uint8(34))
	}
	f.Add("x", "CRC32 ", uint8(40))
	f.Add("x", "sha1", uint8(40))
	f.Fuzz(func(t *testing.T, name, strategy string, max8 uint8) {
		max := 34 + int(max8)%200
		strat, err := ParseStrategy(strategy)
		if err != nil {
			return
		}
		if again, err := ParseStrategy(strat); err != nil || again != strat {
			t.Fatalf("ParseStrategy is not idempotent on %q: %q, %v", strat, again, err)
		}
		id, err := Volume(name, strat, max)
		if err != nil {
			return
		}
		if id2, _ := Volume(name, strat, max); id2 != id {
			t.Fatalf("Volume(%q) not deterministic: %q, %q", name, id, id2)
		}
		if InvalidChars(id, IsVolumeChar) != "" || id == "" {
			t.Fatalf("Volume(%q, %q) = %q: outside the volume alphabet", name, strat, id)
		}
		if strat != "" {
			return
		}
		if len(id) > max {
			t.Fatalf("Volume(%q, max %d) = %d bytes", name, max, len(id))
		}
		if len(name) <= max && id != name || len(name) > max && !strings.HasPrefix(id, name[:max-33]) {
			t.Fatalf("Volume(%q, max %d) = %q", name, max, id)
		}
	})
}
