package api

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Version is a TrueNAS release as system.version reports it:
// "TrueNAS-SCALE-24.10.2" (24.10 and older SCALE), "TrueNAS-25.04.2"
// (25.04 on), "TrueNAS-13.0-U6.1" (CORE).
type Version struct {
	Year, Month, Patch int
	Product            string // "TrueNAS-SCALE", "TrueNAS", "FreeNAS", ...
}

// The first dotted number in the string is the release; a CORE/FreeNAS
// "-U<n>" suffix is its patch level.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)-?(\d+)\.(\d+)(?:\.(\d+))?(?:-U(\d+))?`) }) // compiled on first use

// ParseVersion reads a system.version string.
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"`))
	m := versionRE().FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("truenas: cannot read a version number in %q", s)
	}
	v := Version{Product: strings.TrimRight(m[1], "-")}
	v.Year, _ = strconv.Atoi(m[2])
	v.Month, _ = strconv.Atoi(m[3])
	switch {
	case m[4] != "":
		v.Patch, _ = strconv.Atoi(m[4])
	case m[5] != "":
		v.Patch, _ = strconv.Atoi(m[5])
	}
	return v, nil
}

// AtLeast reports whether v is release y.m.p or newer.
func (v Version) AtLeast(y, m, p int) bool {
	if v.Year != y {
		return v.Year > y
	}
	if v.Month != m {
		return v.Month > m
	}
	return v.Patch >= p
}

// String renders v the way 25.04+ does ("TrueNAS-25.04.2"); SCALE-era
// calendar versions keep their two-digit month.
func (v Version) String() string {
	num := fmt.Sprintf("%d.%d.%d", v.Year, v.Month, v.Patch)
	if v.Year >= 20 {
		num = fmt.Sprintf("%d.%02d.%d", v.Year, v.Month, v.Patch)
	}
	if v.Product == "" {
		return num
	}
	return v.Product + "-" + num
}

// Version thresholds the client acts on.
var (
	// 25.10 adds core.set_options({"legacy_jobs": false}).
	versionDirectJobs = Version{Year: 25, Month: 10}
)

func (v Version) atLeast(o Version) bool { return v.AtLeast(o.Year, o.Month, o.Patch) }
