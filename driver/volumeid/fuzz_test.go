package volumeid

import (
	"strings"
	"testing"
)

// FuzzVolume: an id is at most maxLen bytes, deterministic, in the volume
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
		maxLen := 34 + int(max8)%200
		strategy, err := ParseStrategy(strategy)
		if err != nil {
			return
		}
		if again, err := ParseStrategy(strategy); err != nil || again != strategy {
			t.Fatalf("ParseStrategy is not idempotent on %q: %q, %v", strategy, again, err)
		}
		id, err := Volume(name, strategy, maxLen)
		if err != nil {
			return
		}
		if id2, _ := Volume(name, strategy, maxLen); id2 != id {
			t.Fatalf("Volume(%q) not deterministic: %q, %q", name, id, id2)
		}
		if InvalidChars(id, IsVolumeChar) != "" || id == "" {
			t.Fatalf("Volume(%q, %q) = %q: outside the volume alphabet", name, strategy, id)
		}
		if strategy != "" {
			return
		}
		if len(id) > maxLen {
			t.Fatalf("Volume(%q, maxLen %d) = %d bytes", name, maxLen, len(id))
		}
		if len(name) <= maxLen && id != name || len(name) > maxLen && !strings.HasPrefix(id, name[:maxLen-33]) {
			t.Fatalf("Volume(%q, maxLen %d) = %q", name, maxLen, id)
		}
	})
}
