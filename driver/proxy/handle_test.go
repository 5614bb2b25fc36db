package proxy

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name, prefix, handle, conn, id string
		ok                             bool
	}{
		{"volume", VolumePrefix, "v:nfs/pvc-1", "nfs", "pvc-1", true},
		{"snapshot", SnapshotPrefix, "s:nfs/snap-1", "nfs", "snap-1", true},
		{"id keeps slashes", VolumePrefix, "v:c/a/b/c", "c", "a/b/c", true},
		{"63-char connection", VolumePrefix, "v:" + long[:63] + "/x", long[:63], "x", true},
		{"no prefix", VolumePrefix, "nfs/pvc-1", "", "", false},
		{"wrong prefix", VolumePrefix, "s:nfs/pvc-1", "", "", false},
		{"no slash", VolumePrefix, "v:nfs", "", "", false},
		{"empty connection", VolumePrefix, "v:/pvc-1", "", "", false},
		{"empty id", VolumePrefix, "v:nfs/", "", "", false},
		{"dot dot", VolumePrefix, "v:../x", "", "", false},
		{"dot", VolumePrefix, "v:./x", "", "", false},
		{"64-char connection", VolumePrefix, "v:" + long + "/x", "", "", false},
		{"NUL in connection", VolumePrefix, "v:a\x00b/x", "", "", false},
		{"empty", VolumePrefix, "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, id, ok := Parse(tt.prefix, tt.handle)
			if conn != tt.conn || id != tt.id || ok != tt.ok {
				t.Fatalf("Parse(%q, %q) = %q, %q, %v; want %q, %q, %v", tt.prefix, tt.handle, conn, id, ok, tt.conn, tt.id, tt.ok)
			}
		})
	}
}

func TestResolveDefaultConnection(t *testing.T) {
	tests := []struct {
		handle, def, conn, id string
		ok                    bool
	}{
		{"pvc-legacy", "main", "main", "pvc-legacy", true},
		{"v:other/pvc", "main", "other", "pvc", true},
		{"pvc-legacy", "", "", "", false},
		{"s:other/snap", "main", "", "", false}, // a snapshot handle is never a volume id
		{"v:../x", "main", "", "", false},       // a broken proxy handle is not a legacy one
		{"", "main", "", "", false},
	}
	for _, tt := range tests {
		conn, id, ok := Resolve(VolumePrefix, tt.handle, tt.def)
		if conn != tt.conn || id != tt.id || ok != tt.ok {
			t.Errorf("Resolve(%q, default %q) = %q, %q, %v; want %q, %q, %v", tt.handle, tt.def, conn, id, ok, tt.conn, tt.id, tt.ok)
		}
	}
}

func TestCheckConnectionName(t *testing.T) {
	good := []string{"a", "nfs", "Zone1.nfs_fast-2", strings.Repeat("x", 63)}
	bad := []string{"", ".", "..", "../x", "a/b", "-a", ".hidden", "a b", "a\x00", strings.Repeat("x", 64), "ü"}
	for _, n := range good {
		if err := CheckConnectionName(n); err != nil {
			t.Errorf("CheckConnectionName(%q) = %v; want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := CheckConnectionName(n); err == nil {
			t.Errorf("CheckConnectionName(%q) = nil; want an error", n)
		}
	}
}

// FuzzParse checks the parser's invariants: it never panics, a parsed
// connection is always a valid name (so it is safe as a file name), and a
// parsed handle decorates back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"v:nfs/pvc-1", "s:a/b", "v:../x", "v:a/b/c", "v:", "v:/", "x", "v:" + strings.Repeat("a", 64) + "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		for _, p := range []string{VolumePrefix, SnapshotPrefix} {
			conn, id, ok := Parse(p, h)
			if !ok {
				continue
			}
			if err := CheckConnectionName(conn); err != nil {
				t.Fatalf("Parse(%q) accepted connection %q: %v", h, conn, err)
			}
			if strings.ContainsAny(conn, "/\x00") || conn == "." || conn == ".." {
				t.Fatalf("Parse(%q) returned unsafe connection %q", h, conn)
			}
			if Decorate(p, conn, id) != h {
				t.Fatalf("Decorate(Parse(%q)) = %q", h, Decorate(p, conn, id))
			}
		}
	})
}
