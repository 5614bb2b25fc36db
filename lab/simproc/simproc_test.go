package simproc

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// This test binary is also the child it starts.
func TestMain(m *testing.M) {
	if spec := os.Getenv(Env); spec != "" {
		os.Exit(Serve(spec, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestChildProcess: a TrueNAS host in a child process says hello with a
// driver config, counts nothing after a reset, runs in a process of its
// own, and ends when closed.
func TestChildProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(self, Spec{Kind: "truenas", Dir: t.TempDir(), Driver: "freenas-api-nfs", Version: "25.10"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid == os.Getpid() || !strings.Contains(p.Config, "driver: freenas-api-nfs") || p.Port == 0 {
		t.Errorf("hello: pid %d (ours %d), port %d, config %q", p.Pid, os.Getpid(), p.Port, p.Config)
	}
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	c, err := p.Counts()
	if err != nil || c.Records != 0 || c.RoundTrips() != 0 {
		t.Errorf("counts after reset: %+v, %v", c, err)
	}
	if _, err := p.CPU(); err != nil {
		t.Errorf("the child's CPU: %v", err)
	}
	p.Close()
	select {
	case <-p.done:
	default:
		t.Error("the child still runs after Close")
	}
}

// TestBadSpec: what the child cannot start comes back as an error naming
// the problem, in its hello line.
func TestBadSpec(t *testing.T) {
	var out bytes.Buffer
	if code := Serve(`{"Kind":"nfs-magic"}`, strings.NewReader(""), &out); code == 0 {
		t.Errorf("exit code 0 for an unknown kind")
	}
	var h Hello
	if err := json.Unmarshal(out.Bytes(), &h); err != nil || !strings.Contains(h.Error, `"nfs-magic"`) {
		t.Errorf("hello %q (%v); want an error naming the kind", out.String(), err)
	}
	out.Reset()
	if code := Serve(`{`, strings.NewReader(""), &out); code != 2 || !strings.Contains(out.String(), Env) {
		t.Errorf("bad JSON: exit %d, hello %q; want 2 and the variable named", code, out.String())
	}
}
