package zfsssh

import (
	"strings"
	"testing"
	"time"
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

// The round-trip latency is paid once per exec, however many commands the
// line runs; the per-command latency once per command.
func TestRoundTripLatency(t *testing.T) {
	const d = 100 * time.Millisecond
	e := startEnv(t, nil)
	e.srv.Faults().SetRoundTripLatency(d)
	start := time.Now()
	if r := e.run("echo a; echo b; echo c; echo d; echo e"); r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	// Five commands in one exec: one delay (only a lower bound is reliable
	// on a loaded machine; five delays would be 500 ms).
	if took := time.Since(start); took < d || took >= 4*d {
		t.Fatalf("one exec of five commands took %v; want one round trip of %v", took, d)
	}
	e.srv.Faults().SetRoundTripLatency(0)
	e.srv.Faults().SetLatency("echo", d)
	start = time.Now()
	if r := e.run("echo a; echo b; echo c"); r.code != 0 {
		t.Fatalf("run: %+v", r)
	}
	if took := time.Since(start); took < 3*d {
		t.Fatalf("three commands with a per-command latency took %v; want at least %v", took, 3*d)
	}
}
