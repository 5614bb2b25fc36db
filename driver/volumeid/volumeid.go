// Package volumeid turns CSI request names into backend ids the way
// democratic-csi does (its volume and snapshot name alphabets and its
// _private.csi.volume.idHash strategies), and keeps ids short enough for the
// proxy's handle decoration to stay within CSI's 128 bytes.
package volumeid

import (
	"crypto/md5" //nolint:gosec // G501: an id hash compatible with democratic-csi, not a security measure
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Strategies lists the id hash strategies, for error messages.
const Strategies = "md5, crc8, crc16 or crc32"

// ParseStrategy normalises an idHash strategy ("" = none).
func ParseStrategy(s string) (string, error) {
	switch lower := strings.ToLower(strings.TrimSpace(s)); lower {
	case "", "md5", "crc8", "crc16", "crc32":
		return lower, nil
	}
	return "", fmt.Errorf("unknown id hash strategy %q: use %s (or leave it empty)", s, Strategies)
}

// Volume turns a CreateVolume name into a volume id of at most limit bytes.
//
// Without a strategy the name must use democratic-csi's volume id alphabet
// ([A-Za-z0-9_-], starting with a letter or digit) and is the id itself
// when it fits; a longer name is shortened (see Shorten). With a strategy
// the id is the hash of the name exactly as democratic-csi computes it, and
// any name is accepted.
func Volume(name, strategy string, limit int) (string, error) {
	if name == "" {
		return "", fmt.Errorf("name is required")
	}
	if strategy != "" {
		return Hash(name, strategy)
	}
	if bad := InvalidChars(name, IsVolumeChar); bad != "" {
		return "", fmt.Errorf("volume name %q contains invalid characters %q: only A-Z, a-z, 0-9, _ and - are allowed", name, bad)
	}
	if !IsAlnum(name[0]) {
		return "", fmt.Errorf("volume name %q must begin with a letter or digit", name)
	}
	return Shorten(name, limit), nil
}

// Shorten returns name when it is at most limit bytes, else its first
// limit-33 bytes, "-" and the 32 hex digits of its md5: distinct names stay
// distinct and the readable start is kept. limit must be at least 34.
func Shorten(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := md5.Sum([]byte(name)) //nolint:gosec // G401: see the import
	return name[:limit-1-2*md5.Size] + "-" + hex.EncodeToString(sum[:])
}

// Hash is democratic-csi's id hash: md5 gives 32 hex digits; crc8, crc16
// and crc32 give the checksum in decimal (democratic-csi stringifies the
// number its crc package returns).
func Hash(name, strategy string) (string, error) {
	switch strategy {
	case "md5":
		sum := md5.Sum([]byte(name)) //nolint:gosec // G401: see the import
		return hex.EncodeToString(sum[:]), nil
	case "crc8":
		return strconv.FormatUint(uint64(CRC8(name)), 10), nil
	case "crc16":
		return strconv.FormatUint(uint64(CRC16(name)), 10), nil
	case "crc32":
		return strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(name))), 10), nil
	}
	return "", fmt.Errorf("unknown id hash strategy %q", strategy)
}

// CRC8 is CRC-8 with polynomial 0x07, initial value 0, no reflection (the
// "crc-8" model of the crc package democratic-csi uses).
func CRC8(s string) uint8 {
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

// CRC16 is CRC-16/ARC: polynomial 0x8005 reflected (0xA001), initial value
// 0 (the "crc-16" model of the crc package democratic-csi uses).
func CRC16(s string) uint16 {
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

// InvalidChars returns the distinct bytes of s that ok rejects, in order of
// first appearance.
func InvalidChars(s string, ok func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !ok(c) && !strings.ContainsRune(b.String(), rune(c)) {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// IsAlnum reports an ASCII letter or digit.
func IsAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// IsVolumeChar is democratic-csi's volume id alphabet.
func IsVolumeChar(c byte) bool { return IsAlnum(c) || c == '_' || c == '-' }

// IsSnapshotChar is democratic-csi's snapshot name alphabet.
func IsSnapshotChar(c byte) bool { return IsVolumeChar(c) || c == ':' || c == '.' || c == '+' }
