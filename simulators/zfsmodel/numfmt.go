package zfsmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// niceNum formats like zfs_nicenum_format: 1024-based units, at most 5
// characters where possible ("1.50G", "96K"); bytes adds the "B" unit to
// values below 1K (zfs_nicebytes).
func niceNum(num uint64, bytes bool) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if bytes {
		units[0] = "B"
	}
	n, index := num, 0
	for n >= 1024 && index < 6 {
		n /= 1024
		index++
	}
	u := units[index]
	div := math.Pow(1024, float64(index))
	if index == 0 || num%uint64(div) == 0 {
		return fmt.Sprintf("%d%s", n, u)
	}
	var s string
	for i := 2; i >= 0; i-- {
		s = strconv.FormatFloat(float64(num)/div, 'f', i, 64) + u
		if len(s) <= 5 {
			break
		}
	}
	return s
}

func niceBytes(num int64) string {
	if num < 0 {
		num = 0
	}
	return niceNum(uint64(num), true)
}

// parseNiceNum mirrors zfs_nicestrtonum: a decimal number with an optional
// B/K/M/G/T/P/E/Z suffix (also "KB", "KiB"); on failure it returns the
// explanation zfs prints.
func parseNiceNum(value string) (uint64, string) {
	if value == "" || (value[0] < '0' || value[0] > '9') && value[0] != '.' {
		return 0, fmt.Sprintf("bad numeric value '%s'", value)
	}
	i := 0
	for i < len(value) && value[i] >= '0' && value[i] <= '9' {
		i++
	}
	if i < len(value) && value[i] == '.' {
		j := i + 1
		for j < len(value) && value[j] >= '0' && value[j] <= '9' {
			j++
		}
		f, err := strconv.ParseFloat(value[:j], 64)
		if err != nil {
			return 0, fmt.Sprintf("bad numeric value '%s'", value)
		}
		shift, aux := strToShift(value[j:])
		if aux != "" {
			return 0, aux
		}
		f *= math.Pow(2, float64(shift))
		if f >= math.MaxUint64 {
			return 0, "numeric value is too large"
		}
		return uint64(f), ""
	}
	n, err := strconv.ParseUint(value[:i], 10, 64)
	if err != nil {
		return 0, "numeric value is too large"
	}
	shift, aux := strToShift(value[i:])
	if aux != "" {
		return 0, aux
	}
	if shift >= 64 || (n<<shift)>>shift != n {
		return 0, "numeric value is too large"
	}
	return n << shift, ""
}

func strToShift(suffix string) (uint, string) {
	if suffix == "" {
		return 0, ""
	}
	const ends = "BKMGTPEZ"
	i := strings.IndexByte(ends, upper(suffix[0]))
	if i < 0 {
		return 0, fmt.Sprintf("invalid numeric suffix '%s'", suffix)
	}
	rest := strings.ToUpper(suffix[1:])
	if rest == "" || (upper(suffix[0]) != 'B' && (rest == "B" || rest == "IB")) {
		return uint(10 * i), ""
	}
	return 0, fmt.Sprintf("invalid numeric suffix '%s'", suffix)
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// ratio formats a compression ratio stored in hundredths ("1.00x").
func ratio(hundredths uint64, literal bool) string {
	s := fmt.Sprintf("%d.%02d", hundredths/100, hundredths%100)
	if literal {
		return s
	}
	return s + "x"
}
