package zfs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a zfs size: plain bytes ("16384") or a number with a
// binary suffix as zfs accepts it ("16K", "16k", "1.5G", "512B", "1M").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := int64(1)
	last := t[len(t)-1]
	if last == 'B' || last == 'b' {
		t = t[:len(t)-1]
		if t == "" {
			return 0, fmt.Errorf("invalid size %q", s)
		}
		last = t[len(t)-1]
	}
	if i := strings.IndexByte("KMGTPE", upper(last)); i >= 0 && (last < '0' || last > '9') {
		mult = 1 << (10 * (i + 1))
		t = t[:len(t)-1]
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n < 0 || (mult > 1 && n > (1<<63-1)/mult) {
			return 0, fmt.Errorf("invalid size %q", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f >= 0) || mult == 1 {
		return 0, fmt.Errorf("invalid size %q: use bytes or a number with K, M, G, T, P or E", s)
	}
	// Inf, NaN and values of 8 EiB or more do not fit in int64: converting
	// them gives a negative size.
	if b := f * float64(mult); b < math.MaxInt64 {
		return int64(b), nil
	}
	return 0, fmt.Errorf("invalid size %q: larger than 8E", s)
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
