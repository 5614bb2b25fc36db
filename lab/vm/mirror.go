package vm

import (
	"bufio"
	"io"
	"os"
	"strings"
)

// DefaultMirror is used when the host names no Debian mirror.
const DefaultMirror = "http://deb.debian.org/debian"

// debianSources is where Debian 12 keeps its deb822 source list.
var debianSources = "/etc/apt/sources.list.d/debian.sources"

// hostMirror returns the mirror the host's apt uses: the lab machines reach
// Debian's packages only through it.
func hostMirror() string {
	f, err := os.Open(debianSources)
	if err != nil {
		return DefaultMirror
	}
	defer f.Close()
	if m := parseMirror(f); m != "" {
		return m
	}
	return DefaultMirror
}

// parseMirror returns the first URI of the first "URIs:" field of a deb822
// sources file, or "" when there is none. Comments are skipped.
func parseMirror(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "URIs") {
			continue
		}
		if f := strings.Fields(val); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}
