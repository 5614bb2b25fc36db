package localhostpath

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"net/url"
	"strconv"
	"strings"
)

// MaxIDLen is the longest volume or snapshot id this backend returns. It
// leaves room for the proxy's decoration (`v:<connection>/`) within CSI's
// 128-byte limit.
const MaxIDLen = 64

// truncPrefixLen is how much of an over-long name is kept readable: the
// rest of the id is "-" and 32 hex digits of the name's md5.
const truncPrefixLen = MaxIDLen - 1 - 2*md5.Size

// volumeID turns a CreateVolume name into the volume id (the directory
// name under v/).
//
// Without an id hash strategy the name must be democratic-csi's volume id
// alphabet ([A-Za-z0-9_-], starting with a letter or digit) and is the id
// itself when it is at most MaxIDLen bytes; a longer name becomes its first
// 31 bytes, "-" and the md5 of the whole name in hex (64 bytes).
//
// With a strategy the id is the hash of the name, exactly as democratic-csi
// computes it (md5: 32 hex digits; crc8/crc16/crc32: the checksum in
// decimal, because democratic-csi stringifies the number the crc package
// returns), and like democratic-csi any name is accepted.
func volumeID(name, strategy string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("name is required")
	}
	if strategy != "" {
		return hashName(name, strategy)
	}
	if bad := invalidChars(name, isVolumeIDChar); bad != "" {
		return "", fmt.Errorf("volume name %q contains invalid characters %q: only A-Z, a-z, 0-9, _ and - are allowed", name, bad)
	}
	if !isAlnum(name[0]) {
		return "", fmt.Errorf("volume name %q must begin with a letter or digit", name)
	}
	return shorten(name), nil
}

// snapshotID turns a CreateSnapshot name into the snapshot id (the
// directory name under s/): democratic-csi's snapshot name alphabet
// [A-Za-z0-9_-:.+], not starting with "." (dot names are switchyard's
// temporary directories), shortened like volume names.
func snapshotID(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("name is required")
	}
	if bad := invalidChars(name, isSnapshotIDChar); bad != "" {
		return "", fmt.Errorf("snapshot name %q contains invalid characters %q: only A-Z, a-z, 0-9, _, -, :, . and + are allowed", name, bad)
	}
	if name[0] == '.' {
		return "", fmt.Errorf("snapshot name %q must not begin with \".\"", name)
	}
	return shorten(name), nil
}

func shorten(name string) string {
	if len(name) <= MaxIDLen {
		return name
	}
	sum := md5.Sum([]byte(name))
	return name[:truncPrefixLen] + "-" + hex.EncodeToString(sum[:])
}

func hashName(name, strategy string) (string, error) {
	switch strategy {
	case "md5":
		sum := md5.Sum([]byte(name))
		return hex.EncodeToString(sum[:]), nil
	case "crc8":
		return strconv.FormatUint(uint64(crc8(name)), 10), nil
	case "crc16":
		return strconv.FormatUint(uint64(crc16(name)), 10), nil
	case "crc32":
		return strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(name))), 10), nil
	}
	return "", fmt.Errorf("unknown id hash strategy %q", strategy)
}

// crc8 is CRC-8 with polynomial 0x07, initial value 0, no reflection (the
// "crc-8" model of the crc package democratic-csi uses).
func crc8(s string) uint8 {
	var c uint8
	for i := 0; i < len(s); i++ {
		c ^= s[i]
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// crc16 is CRC-16/ARC: polynomial 0x8005 reflected (0xA001), initial value
// 0 (the "crc-16" model of the crc package democratic-csi uses).
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i])
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
	}
	return c
}

// invalidChars returns the distinct bytes of s that ok rejects, in order of
// first appearance.
func invalidChars(s string, ok func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !ok(c) && !strings.ContainsRune(b.String(), rune(c)) {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isVolumeIDChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isSnapshotIDChar(c byte) bool {
	return isVolumeIDChar(c) || c == ':' || c == '.' || c == '+'
}

// safeComponent reports whether an id from a request may be used as one
// path component under a base directory: not empty, not "." or "..", no
// "/" and no NUL. Ids that fail can name no volume or snapshot.
func safeComponent(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\x00") &&
		len(id) <= 255 // NAME_MAX: a longer name cannot exist on disk
}

// isTemporary reports whether a directory entry is one of switchyard's
// temporary directories (or any other dot entry), never a volume or snapshot.
func isTemporary(name string) bool { return strings.HasPrefix(name, ".") }

// snapshotRef is a snapshot id from a request, resolved to its directory.
type snapshotRef struct {
	dir    string // directory name under s/ ("" when the id names none)
	driver string // democratic-csi snapshot driver named by the id
}

// parseSnapshotID resolves a snapshot id: switchyard's own ids are the
// directory name; democratic-csi's ids are URL query strings
// `snapshot_driver=filecopy&snapshot_id=<dir>`. A query without
// snapshot_driver is, as in democratic-csi, a plain filecopy directory name.
func parseSnapshotID(id string) snapshotRef {
	ref := snapshotRef{dir: id, driver: snapshotDriverFilecopy}
	if strings.Contains(id, "=") {
		if q, err := url.ParseQuery(id); err == nil && q.Get("snapshot_driver") != "" {
			ref = snapshotRef{dir: q.Get("snapshot_id"), driver: q.Get("snapshot_driver")}
		}
	}
	if !safeComponent(ref.dir) {
		ref.dir = ""
	}
	return ref
}

// legacySnapshotID is democratic-csi's id for a filecopy snapshot directory.
func legacySnapshotID(dir string) string {
	return url.Values{"snapshot_driver": {snapshotDriverFilecopy}, "snapshot_id": {dir}}.Encode()
}
