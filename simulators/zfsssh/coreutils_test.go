package zfsssh

import (
	"strings"
	"testing"
)

// TestCoreutils: the ordinary tools a storage host has, with GNU's output
// shapes and exit statuses, on the virtual filesystem and on datasets.
func TestCoreutils(t *testing.T) {
	host := newFakeHost(t)
	host.addFS(t, "tank/data")
	e := startWith(t, host, Options{Host: host, Users: defaultUsers()})
	e.run("printf 'b\\na\\nb\\nc\\n' > /tmp/f")
	cases := []struct {
		cmd, out string
		code     int
	}{
		{"head -n 2 /tmp/f", "b\na\n", 0},
		{"head -2 /tmp/f", "b\na\n", 0},
		{"head -c 3 /tmp/f", "b\na", 0},
		{"tail -n 1 /tmp/f", "c\n", 0},
		{"wc -l /tmp/f", "4 /tmp/f\n", 0},
		{"wc -l < /tmp/f", "4\n", 0},
		{"wc -w /tmp/f /tmp/f", "4 /tmp/f\n4 /tmp/f\n8 total\n", 0},
		{"sort /tmp/f | uniq -c", "      1 a\n      2 b\n      1 c\n", 0},
		{"sort -u /tmp/f", "a\nb\nc\n", 0},
		{"grep -n c /tmp/f", "4:c\n", 0},
		{"grep -v b /tmp/f", "a\nc\n", 0},
		{"grep -q z /tmp/f", "", 1},
		{"grep -E '^(a|c)$' /tmp/f", "a\nc\n", 0},
		{"grep x /nope", "", 2},
		{"ls /tmp", "f\n", 0},
		{"ls -a /tmp", ".\n..\nf\n", 0},
		{"ls /nope", "", 2},
		{"basename /a/b.img .img", "b\n", 0},
		{"dirname /a/b", "/a\n", 0},
		{"realpath /tmp/../tmp/f", "/tmp/f\n", 0},
		{"readlink /tmp/f", "", 1},
		{"pwd", "/root\n", 0},
		{"printf '%s-%d\\n' x 3", "x-3\n", 0},
		{"printf 'a\\tb\\\\c\\x\\n'", "a\tb\\c\\x\n", 0},            // the escapes, and an unknown one kept
		{"printf '%s,' a b c", "a,b,c,", 0},                         // the format reused
		{`printf '[%s]' a '' "" b\ c x"$#"`, "[a][][][b c][x0]", 0}, // literal words, empty ones, joined parts
		{"date +%F | wc -c", "11\n", 0},
	}
	for _, c := range cases {
		r := e.run(c.cmd)
		if r.code != c.code || r.stdout != c.out {
			t.Errorf("%s: %d %q (stderr %q), want %d %q", c.cmd, r.code, r.stdout, r.stderr, c.code, c.out)
		}
	}
	if r := e.run("ls /nope"); !strings.Contains(r.stderr, "ls: cannot access '/nope': No such file or directory") {
		t.Errorf("ls of a missing path: %q", r.stderr)
	}
	if r := e.run("head -Z /tmp/f"); r.code != 1 || !strings.Contains(r.stderr, "head: invalid option -- 'Z'") {
		t.Errorf("head -Z: %d %q", r.code, r.stderr)
	}
	for _, p := range []string{"/usr/bin/ls", "/bin/ls", "/usr/bin/wc", "/usr/bin/grep"} {
		if r := e.run("test -x " + p + " && echo yes"); r.stdout != "yes\n" {
			t.Errorf("%s is not an executable file: %+v", p, r)
		}
	}
}

// resolve finds a bare name in the first directory of PATH that has it,
// and reports that path; a name in none is not found.
func TestResolveSearchesPathInOrder(t *testing.T) {
	e := startEnv(t, nil)
	names := map[string]bool{"no-such-program": true}
	for p := range e.srv.paths {
		names[p[strings.LastIndexByte(p, '/')+1:]] = true
	}
	if len(names) < 10 {
		t.Fatalf("only %d program names", len(names))
	}
	for name := range names {
		wantFile := ""
		for _, dir := range searchPath {
			if _, ok := e.srv.paths[dir+"/"+name]; ok {
				wantFile = dir + "/" + name
				break
			}
		}
		prog, file, ok := e.srv.resolve(name)
		if ok != (wantFile != "") || file != wantFile || (ok && prog != e.srv.paths[wantFile]) {
			t.Errorf("resolve(%q) = %q, %q, %v; want the file %q", name, prog, file, ok, wantFile)
		}
	}
}
