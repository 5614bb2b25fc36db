package proxy

import (
	"regexp"
	"strings"
	"testing"
)

// validName is the connection name rule written independently of
// CheckConnectionName, so the fuzzer compares two implementations.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// FuzzCheckConnectionName: a name is accepted exactly when it matches the
// documented rule (so it is always safe as a file name), and the check
// never panics.
func FuzzCheckConnectionName(f *testing.F) {
	for _, s := range []string{"nfs", "a", ".", "..", "a/b", "Zone1.nfs_fast-2", strings.Repeat("x", 63), strings.Repeat("x", 64), "a\x00", "ü", "-a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckConnectionName(name)
		if want := validName.MatchString(name); (err == nil) != want {
			t.Fatalf("CheckConnectionName(%q) = %v; the rule says valid=%v", name, err, want)
		}
		if err == nil && (name == "." || name == ".." || strings.ContainsAny(name, "/\x00")) {
			t.Fatalf("CheckConnectionName accepted unsafe %q", name)
		}
	})
}

// FuzzResolve: Resolve never returns an empty id or an invalid connection;
// a handle that parses keeps its own connection; one with the other kind's
// prefix never resolves; an unprefixed handle goes to the default
// connection unchanged.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"v:nfs/pvc-1", "s:a/b@snap", "pvc-legacy", "v:", "s:x", "", "v:../x/y"} {
		f.Add(s, "default")
	}
	f.Fuzz(func(t *testing.T, h, def string) {
		for _, p := range []string{VolumePrefix, SnapshotPrefix} {
			conn, id, ok := Resolve(p, h, def)
			if !ok {
				if c, i, pok := Parse(p, h); pok {
					t.Fatalf("Resolve(%q) failed although Parse gives %q %q", h, c, i)
				}
				continue
			}
			if id == "" || conn == "" {
				t.Fatalf("Resolve(%q, %q) = %q, %q: empty part", h, def, conn, id)
			}
			if c, i, pok := Parse(p, h); pok {
				if c != conn || i != id {
					t.Fatalf("Resolve(%q) = %q %q; Parse = %q %q", h, conn, id, c, i)
				}
				continue
			}
			if strings.HasPrefix(h, VolumePrefix) || strings.HasPrefix(h, SnapshotPrefix) {
				t.Fatalf("Resolve(%q) migrated a prefixed handle to %q", h, conn)
			}
			if conn != def || id != h {
				t.Fatalf("Resolve(%q, %q) = %q %q; want the default connection and the handle as is", h, def, conn, id)
			}
		}
	})
}

// FuzzPageToken: a proxy page token decodes only to a valid connection;
// parse(encode(conn, token)) gives both back for every valid connection
// and any backend token; decoding arbitrary text never panics.
func FuzzPageToken(f *testing.F) {
	f.Add("nfs", "after:pvc-1", encodeToken("nfs", "after:pvc-1"))
	f.Add("a", "", "bm9uZQ")
	f.Add("x.y", "line\nbreak", "Li4KeA") // "..\nx"
	f.Add("z", "", "!!!")
	f.Fuzz(func(t *testing.T, conn, bt, raw string) {
		if c, b, ok := decodeToken(raw); ok {
			if CheckConnectionName(c) != nil {
				t.Fatalf("decodeToken(%q) gave invalid connection %q", raw, c)
			}
			if c2, b2, ok2 := decodeToken(encodeToken(c, b)); !ok2 || c2 != c || b2 != b {
				t.Fatalf("re-encoding %q %q does not decode back: %q %q %v", c, b, c2, b2, ok2)
			}
		}
		if CheckConnectionName(conn) != nil {
			return
		}
		tok := encodeToken(conn, bt)
		c, b, ok := decodeToken(tok)
		if !ok || c != conn || b != bt {
			t.Fatalf("decodeToken(encodeToken(%q, %q)) = %q, %q, %v", conn, bt, c, b, ok)
		}
	})
}
