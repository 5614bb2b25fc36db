package sharing

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

const enotdir = 20 // ENOTDIR, not among mw's errnos

func itoa(i int) string { return strconv.Itoa(i) }

func join(l []string, sep string) string { return strings.Join(l, sep) }

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// uniq returns the distinct values, sorted (Python iterates its sets in no
// fixed order; sorting keeps the simulator's messages reproducible).
func uniq(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func without(l []string, drop string) []string {
	var out []string
	for _, s := range l {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range uniq(a) {
		if contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// pySet renders strings as Python prints a set: {'a', 'b'}.
func pySet(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + s + "'"
	}
	return "{" + strings.Join(q, ", ") + "}"
}

// parseNetwork reads an address or network as Python's
// ipaddress.ip_network(x, strict=False) does: host bits are dropped and a
// bare address is a /32 (or /128).
func parseNetwork(s string) (*net.IPNet, bool) {
	if !strings.Contains(s, "/") {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, false
		}
		bits := 128
		if ip.To4() != nil {
			ip, bits = ip.To4(), 32
		}
		return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, true
	}
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, false
	}
	return n, true
}

// overlapping returns the first network of used that overlaps n (both
// parse; mixed IPv4/IPv6 never overlap).
func overlapping(used []string, n string) (string, bool) {
	a, ok := parseNetwork(n)
	if !ok {
		return "", false
	}
	for _, u := range used {
		b, ok := parseNetwork(u)
		if !ok || len(a.IP) != len(b.IP) {
			continue
		}
		if a.Contains(b.IP) || b.Contains(a.IP) {
			return b.String(), true
		}
	}
	return "", false
}

// randomHex returns n random hex digits.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	rand.Read(b) // never fails since Go 1.24
	return hex.EncodeToString(b)[:n]
}

// uuid4 returns a random RFC 4122 version 4 UUID, as Python's uuid.uuid4().
func uuid4() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// pathFields adds what 26's entries derive from a path: "dataset" (the
// filesystem whose mountpoint holds it) and "relative_path" (below that
// mountpoint, "" at its root), both null where the path resolves to none.
func (s *Service) pathFields(r middleware.Row, p string, resolve bool) {
	if !s.v.AtLeast(26, 0, 0) {
		return
	}
	r["dataset"], r["relative_path"] = nil, nil
	if !resolve || p == "" {
		return
	}
	names, err := s.model.List("", true, zfsmodel.Filesystem)
	if err != nil {
		return
	}
	best, bestMP := "", ""
	for _, n := range names {
		in, err := s.model.Get(n)
		if err != nil || in.Mountpoint == "" {
			continue
		}
		mp := path.Clean(in.Mountpoint)
		if (p == mp || strings.HasPrefix(p, mp+"/")) && len(mp) > len(bestMP) {
			best, bestMP = n, mp
		}
	}
	if best != "" {
		r["dataset"], r["relative_path"] = best, strings.TrimPrefix(strings.TrimPrefix(p, bestMP), "/")
	}
}
