package zfsssh

import (
	"strings"
	"testing"
)

// DropStreamAfter cuts the first session whose output crosses the budget,
// mid-output, once; short commands before it are untouched.
func TestDropStreamAfter(t *testing.T) {
	e := startEnv(t, nil)
	e.srv.Faults().DropStreamAfter(1000)
	if r := e.run("echo short"); r.code != 0 || r.stdout != "short\n" {
		t.Fatalf("a short command: %+v", r)
	}
	r := runOn(t, e.client("root"), "cat", strings.Repeat("x", 10000), false)
	if r.err == nil || len(r.stdout) > 1000 {
		t.Fatalf("the long output was not cut: code %d, %d bytes, err %v", r.code, len(r.stdout), r.err)
	}
	if n := e.srv.Stats().DroppedConnections; n != 1 {
		t.Fatalf("%d connections dropped; want 1", n)
	}
	if r := runOn(t, e.client("root"), "cat", strings.Repeat("y", 10000), false); r.code != 0 || len(r.stdout) != 10000 {
		t.Fatalf("the fault fired twice: code %d, %d bytes, err %v", r.code, len(r.stdout), r.err)
	}
}
