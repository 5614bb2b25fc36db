package main

import (
	"bytes"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// --kubeconfig adds the PVS column: this driver's PersistentVolumes per
// connection (another driver's do not count). A connection that PVs name
// without a file is a row of its own and a problem (exit 1) when the
// connection files are the source; alone, the cluster's connections are
// listed with their counts.
func TestConnectionsWithKubeconfig(t *testing.T) {
	r := newKubeRig(t)
	var a, b string
	r.controller(t, func(c csipb.ControllerServer) {
		a = mkVolume(t, c, "zfs", "pvc-1")
		b = mkVolume(t, c, "zfs", "pvc-2")
		mkVolume(t, c, "zfs", "pvc-orphan")
	})
	r.cluster(t, [][2]string{{testDriver, a}, {testDriver, b}, {testDriver, "v:retired/pvc-9"}, {"other.csi.example.com", "v:zfs/pvc-x"}})
	kube := []string{"--kubeconfig", r.kubeconfig, "--csi-name", testDriver, "--timeout", "30s"}

	var out, errb bytes.Buffer
	code := connectionsCmd(append([]string{"--config", r.main}, kube...), &out, &errb)
	t.Logf("listing:\n%s", out.String())
	if code != 1 {
		t.Fatalf("exit %d; want 1 (a connection without a file)\n%s%s", code, out.String(), errb.String())
	}
	if got := strings.Join(row(t, out.String(), "zfs"), "|"); got != "zfs|loaded|zfs-generic-nfs|nfs, file|zfs-2.2.7-1|3|2" {
		t.Errorf("zfs: %q", got)
	}
	if got := strings.Join(row(t, out.String(), "retired"), "|"); got != "retired|no file|-|-|-|-|1" {
		t.Errorf("retired: %q", got)
	}
	if !strings.Contains(out.String(), "retired: 1 PersistentVolumes name connection retired, but the connections folder has no file for it") {
		t.Errorf("the problem is not named:\n%s", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := connectionsCmd(kube, &out, &errb); code != 0 {
		t.Fatalf("alone: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if got := strings.Join(row(t, out.String(), "zfs"), "|"); got != "zfs|in the cluster|-|-|-|-|2" {
		t.Errorf("alone, zfs: %q\n%s", got, out.String())
	}
	if got := strings.Join(row(t, out.String(), "retired"), "|"); got != "retired|in the cluster|-|-|-|-|1" {
		t.Errorf("alone, retired: %q\n%s", got, out.String())
	}
}

func TestConnectionsKubeconfigUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage:"},
		{[]string{"--config", "m.yaml", "--endpoint", "unix:///x"}, "usage:"},
		{[]string{"--kubeconfig", "k"}, "--kubeconfig needs --csi-name"},
		{[]string{"--config", "m.yaml", "--context", "lab"}, "--context needs --kubeconfig"},
	} {
		var out, errb bytes.Buffer
		if code := connectionsCmd(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := connectionsCmd([]string{"--kubeconfig", "/nonexistent", "--csi-name", "x", "--kubectl", "/nonexistent/kubectl"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), `"/nonexistent/kubectl" was not found`) {
		t.Errorf("kubectl missing: exit %d: %s", code, errb.String())
	}
}
