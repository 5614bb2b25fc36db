package dirvol

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"
)

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestVolumeID(t *testing.T) {
	name64 := "pvc-" + strings.Repeat("a", 60)
	name65 := name64 + "b"
	name100 := "pvc-" + strings.Repeat("0123456789", 9) + "xyzxyz"
	tests := []struct {
		name, strategy, want, errPart string
	}{
		{name: "pvc-1234", want: "pvc-1234"},
		{name: "A_b-9", want: "A_b-9"},
		{name: name64, want: name64},
		{name: name65, want: name65[:31] + "-" + md5hex(name65)},
		{name: name100, want: name100[:31] + "-" + md5hex(name100)},
		{name: "", errPart: "required"},
		{name: "pvc.1", errPart: `"."`},
		{name: "a/b/../c d", errPart: `"/. "`},
		{name: "-x", errPart: "begin with a letter or digit"},
		{name: "_x", errPart: "begin with a letter or digit"},
		// democratic-csi's hashes, checked against the catalogue check
		// values of each CRC model for "123456789"
		{name: "123456789", strategy: "crc32", want: "3421780262"}, // 0xCBF43926
		{name: "123456789", strategy: "crc16", want: "47933"},      // 0xBB3D (CRC-16/ARC)
		{name: "123456789", strategy: "crc8", want: "244"},         // 0xF4 (CRC-8, poly 0x07)
		{name: "pvc-1234", strategy: "md5", want: md5hex("pvc-1234")},
		{name: "job[0]/data", strategy: "md5", want: md5hex("job[0]/data")}, // hashing accepts any name, as democratic-csi
		{name: name100, strategy: "md5", want: md5hex(name100)},
		{name: "", strategy: "md5", errPart: "required"},
	}
	for _, tc := range tests {
		got, err := volumeID(tc.name, tc.strategy)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("volumeID(%q, %q) err = %v, want one mentioning %s", tc.name, tc.strategy, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("volumeID(%q, %q) = %q, %v; want %q", tc.name, tc.strategy, got, err, tc.want)
		}
		if len(got) > MaxIDLen {
			t.Errorf("volumeID(%q) is %d bytes, more than %d", tc.name, len(got), MaxIDLen)
		}
	}
}

func TestVolumeIDTruncationKeepsNamesApart(t *testing.T) {
	prefix := "pvc-" + strings.Repeat("x", 70)
	a, _ := volumeID(prefix+"-one", "")
	b, _ := volumeID(prefix+"-two", "")
	if a == b {
		t.Fatalf("two long names sharing a prefix map to one id %q", a)
	}
	if len(a) != MaxIDLen || len(b) != MaxIDLen {
		t.Errorf("lengths %d %d, want %d", len(a), len(b), MaxIDLen)
	}
	again, _ := volumeID(prefix+"-one", "")
	if again != a {
		t.Errorf("not deterministic: %q then %q", a, again)
	}
}

func TestSnapshotID(t *testing.T) {
	long := "snapshot-" + strings.Repeat("f", 80)
	tests := []struct {
		name, want, errPart string
	}{
		{name: "snapshot-1234", want: "snapshot-1234"},
		{name: "a:b.c+d_e-f", want: "a:b.c+d_e-f"},
		{name: long, want: long[:31] + "-" + md5hex(long)},
		{name: "", errPart: "required"},
		{name: "../x", errPart: `"/"`},
		{name: "a b&c=d", errPart: `" &="`},
		{name: ".hidden", errPart: `begin with "."`},
		{name: "..", errPart: `begin with "."`},
	}
	for _, tc := range tests {
		got, err := snapshotID(tc.name)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("snapshotID(%q) err = %v, want one mentioning %s", tc.name, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("snapshotID(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestParseSnapshotID(t *testing.T) {
	tests := []struct {
		id, dir, driver string
	}{
		{id: "snap-1", dir: "snap-1", driver: "filecopy"},
		{id: "snapshot_driver=filecopy&snapshot_id=pvc-1-snap-1", dir: "pvc-1-snap-1", driver: "filecopy"},
		{id: "snapshot_id=pvc-1-snap%3A1&snapshot_driver=filecopy", dir: "pvc-1-snap:1", driver: "filecopy"},
		{id: "snapshot_driver=filecopy&snapshot_id=a%2Bb", dir: "a+b", driver: "filecopy"},
		{id: "snapshot_driver=restic&snapshot_id=4f2a", dir: "4f2a", driver: "restic"},
		{id: "a=b", dir: "a=b", driver: "filecopy"}, // no snapshot_driver: a plain directory name, as democratic-csi
		{id: "../x", dir: "", driver: "filecopy"},
		{id: "a/b", dir: "", driver: "filecopy"},
		{id: "..", dir: "", driver: "filecopy"},
		{id: "x\x00y", dir: "", driver: "filecopy"},
		{id: "snapshot_driver=filecopy&snapshot_id=..%2Fx", dir: "", driver: "filecopy"},
		{id: "snapshot_driver=filecopy&snapshot_id=..", dir: "", driver: "filecopy"},
		{id: "snapshot_driver=filecopy", dir: "", driver: "filecopy"},
	}
	for _, tc := range tests {
		ref := parseSnapshotID(tc.id)
		if ref.dir != tc.dir || ref.driver != tc.driver {
			t.Errorf("parseSnapshotID(%q) = %+v, want dir %q driver %q", tc.id, ref, tc.dir, tc.driver)
		}
	}
}

func TestLegacySnapshotIDRoundTrip(t *testing.T) {
	for _, dir := range []string{"pvc-1-snap-1", "a:b+c.d"} {
		id := legacySnapshotID(dir)
		if !strings.HasPrefix(id, "snapshot_driver=filecopy&snapshot_id=") {
			t.Errorf("legacySnapshotID(%q) = %q", dir, id)
		}
		if ref := parseSnapshotID(id); ref.dir != dir {
			t.Errorf("round trip of %q gave %q", dir, ref.dir)
		}
	}
	if got := legacySnapshotID("a:b+c"); got != "snapshot_driver=filecopy&snapshot_id=a%3Ab%2Bc" {
		t.Errorf("encoding = %q, want democratic-csi's URLSearchParams form", got)
	}
}

func TestSafeComponent(t *testing.T) {
	for id, want := range map[string]bool{
		"pvc-1": true, "a..b": true, ".tmp-x": true,
		"": false, ".": false, "..": false, "../x": false, "a/b": false, "/": false, "a\x00": false,
		strings.Repeat("a", 256): false,
	} {
		if got := safeComponent(id); got != want {
			t.Errorf("safeComponent(%q) = %v, want %v", id, got, want)
		}
	}
}
