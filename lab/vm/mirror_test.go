package vm

import (
	"strings"
	"testing"
)

func TestParseMirror(t *testing.T) {
	tests := []struct {
		name, sources, want string
	}{
		{"debian 12 default", "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\n", "http://deb.debian.org/debian"},
		{"commented URIs skipped", "# URIs: http://old.example/debian\nURIs: http://mirror.example/debian\n", "http://mirror.example/debian"},
		{"several URIs, first wins", "Types: deb\nURIs: http://a.example/debian http://b.example/debian\n", "http://a.example/debian"},
		{"key is case-insensitive", "uris:   http://c.example/debian  \n", "http://c.example/debian"},
		{"no URIs", "Types: deb\nSuites: bookworm\n", ""},
		{"empty URIs", "URIs:\nURIs: http://d.example/debian\n", "http://d.example/debian"},
		{"empty file", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseMirror(strings.NewReader(tt.sources)); got != tt.want {
				t.Errorf("parseMirror = %q, want %q", got, tt.want)
			}
		})
	}
}
