package zfsmodel

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// newModel opens a model with one pool "tank" in a fresh state directory.
func newModel(t testing.TB, size int64) (*Model, string) {
	t.Helper()
	dir := t.TempDir()
	m, err := Open(Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: size}}, RescanInterval: -1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m, dir
}

// result of one command line.
type result struct {
	code   int
	stdout string
	stderr string
}

// run executes a zfs or zpool command line given as words.
func run(m *Model, stdin io.Reader, args ...string) result {
	var out, errb bytes.Buffer
	var code int
	switch args[0] {
	case "zfs":
		code = m.ZFS(args[1:], stdin, &out, &errb)
	case "zpool":
		code = m.Zpool(args[1:], stdin, &out, &errb)
	default:
		panic("run: " + args[0])
	}
	return result{code, out.String(), errb.String()}
}

// sh runs a command line split on spaces (no quoting needed in tests).
func sh(m *Model, line string) result { return run(m, nil, strings.Fields(line)...) }

// must runs a command and fails the test unless it exits 0.
func must(t testing.TB, m *Model, line string) string {
	t.Helper()
	r := sh(m, line)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}
