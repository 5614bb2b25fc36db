package cluster

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSpawnAndStop: a spawned process is recorded in the state dir, found
// again by another Local on the same dir (as `cluster down` finds what
// `cluster up` started), and stopping it ends its whole process group.
func TestSpawnAndStop(t *testing.T) {
	dir := t.TempDir()
	c, err := newLocal(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A shell with a background child: both must end.
	if err := c.Spawn("sleeper", []string{"/bin/sh", "-c", "sleep 300 & echo child $!; wait"}, []string{"LAB_TEST=1"}); err != nil {
		t.Fatal(err)
	}
	var childPid string
	for i := 0; i < 100 && childPid == ""; i++ {
		b, _ := os.ReadFile(c.LogPath("sleeper"))
		if _, after, ok := strings.Cut(string(b), "child "); ok {
			childPid = strings.TrimSpace(after)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if childPid == "" {
		t.Fatal("the spawned shell did not start its child")
	}
	other, err := Attach(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !other.Running("sleeper") || len(other.RunningProcesses()) != 1 {
		t.Fatalf("another Local on the dir does not see the process: %v", other.RunningProcesses())
	}
	ps := other.procs()
	stopProc(ps[0], 5*time.Second)
	if other.Running("sleeper") {
		t.Error("the process runs after stopProc")
	}
	if _, err := os.Stat("/proc/" + childPid); err == nil {
		if st, _ := os.ReadFile("/proc/" + childPid + "/stat"); !strings.Contains(string(st), ") Z") {
			t.Errorf("the process's child %s outlived it", childPid)
		}
	}
	if err := c.Spawn("missing", []string{"/nonexistent/program"}, nil); err == nil {
		t.Error("spawning a missing program succeeded")
	}
}

// TestSpawnDropsProxyVariables: a proxy named in the environment must not
// reach the cluster's processes (kube-apiserver would send its kubelet
// connections, and with them every kubectl exec, through it).
func TestSpawnDropsProxyVariables(t *testing.T) {
	for _, k := range []string{"HTTPS_PROXY", "http_proxy", "ALL_PROXY", "NO_PROXY"} {
		t.Setenv(k, "http://proxy.invalid:3128")
	}
	dir := t.TempDir()
	c, err := newLocal(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range c.procs() {
			stopProc(p, 5*time.Second)
		}
	})
	if err := c.Spawn("env", []string{"/bin/sh", "-c", "env; echo DONE-$((40+2))"}, []string{"LAB_TEST=kept"}); err != nil {
		t.Fatal(err)
	}
	var out string
	for i := 0; i < 200 && !strings.Contains(out, "DONE-42"); i++ {
		b, _ := os.ReadFile(c.LogPath("env"))
		out = string(b)
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out, "LAB_TEST=kept") {
		t.Fatalf("the extra environment did not reach the process:\n%s", out)
	}
	if strings.Contains(strings.ToLower(out), "proxy=") {
		t.Fatalf("a proxy variable reached the process:\n%s", out)
	}
}
