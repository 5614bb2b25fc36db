package middleware

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a TrueNAS release, e.g. 25.04.2 (year.month.patch).
type Version struct {
	Year, Month, Patch int
}

// Supported are the releases the simulator can be started as, with the
// patch level each one reports.
var Supported = []Version{{24, 10, 2}, {25, 4, 2}, {25, 10, 1}, {26, 4, 0}}

// ParseVersion reads "25.04", "25.04.2" or "TrueNAS-25.04.2". A version
// without a patch level gets the one from Supported for that release.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "TrueNAS-SCALE-"), "TrueNAS-")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: want <year>.<month>[.<patch>], e.g. 25.04", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("version %q: %q is not a number", s, p)
		}
		n[i] = v
	}
	v := Version{n[0], n[1], n[2]}
	if len(parts) == 2 {
		for _, s := range Supported {
			if s.Year == v.Year && s.Month == v.Month {
				v.Patch = s.Patch
			}
		}
	}
	return v, nil
}

// AtLeast reports whether v is year.month.patch or later.
func (v Version) AtLeast(year, month, patch int) bool {
	if v.Year != year {
		return v.Year > year
	}
	if v.Month != month {
		return v.Month > month
	}
	return v.Patch >= patch
}

// String is "25.04.2" (months two digits, as TrueNAS writes them).
func (v Version) String() string { return fmt.Sprintf("%d.%02d.%d", v.Year, v.Month, v.Patch) }

// Release is "25.04" (no patch level).
func (v Version) Release() string { return fmt.Sprintf("%d.%02d", v.Year, v.Month) }

// Product is what system.version returns: "TrueNAS-SCALE-24.10.2" up to
// 24.10, "TrueNAS-25.04.2" from 25.04 on (SCALE was dropped from the name).
func (v Version) Product() string {
	if !v.AtLeast(25, 0, 0) {
		return "TrueNAS-SCALE-" + v.String()
	}
	return "TrueNAS-" + v.String()
}
