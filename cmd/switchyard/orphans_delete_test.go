package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/driver/assembly"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// orphanRig is a proxy config over connections to simulated ZFS hosts.
type orphanRig struct {
	dir, main, conns string
	hosts            map[string]*zfshost.Host
}

func newOrphanRig(t *testing.T, names ...string) *orphanRig {
	t.Helper()
	r := &orphanRig{dir: t.TempDir(), hosts: map[string]*zfshost.Host{}}
	r.conns = filepath.Join(r.dir, "connections")
	if err := os.Mkdir(r.conns, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		r.hosts[n] = h
		r.write(t, filepath.Join(r.conns, n+".yaml"), h.DriverConfig("zfs-generic-nfs", n, ""))
	}
	r.main = filepath.Join(r.dir, "main.yaml")
	r.write(t, r.main, "driver: proxy\nproxy:\n  configFolder: "+r.conns+"\n")
	return r
}

func (r *orphanRig) write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// controller runs fn against the proxy's controller, then closes it.
func (r *orphanRig) controller(t *testing.T, fn func(c csipb.ControllerServer)) {
	t.Helper()
	p, err := assembly.New(assembly.Options{ConfigFile: r.main, CSIName: "x", Modes: []string{assembly.ModeController}, NodeName: "n",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fn(p.Controller)
}

func mkVolume(t *testing.T, c csipb.ControllerServer, conn, name string) string {
	t.Helper()
	capab := []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
	v, err := c.CreateVolume(context.Background(), &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: capab,
		Parameters: map[string]string{"connection": conn}, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	return v.GetVolume().GetVolumeId()
}

func mkSnapshot(t *testing.T, c csipb.ControllerServer, src, name string) string {
	t.Helper()
	s, err := c.CreateSnapshot(context.Background(), &csipb.CreateSnapshotRequest{Name: name, SourceVolumeId: src})
	if err != nil {
		t.Fatal(err)
	}
	return s.GetSnapshot().GetSnapshotId()
}

// datasets lists everything under the connection's parent on its host.
func datasets(t *testing.T, h *zfshost.Host, conn string) string {
	t.Helper()
	var out, errb strings.Builder
	if code := h.Model.ZFS([]string{"list", "-H", "-t", "all", "-o", "name", "-r", h.Pool + "/k8s/" + conn}, nil, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	return out.String()
}

func withStdin(t *testing.T, s string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(s)
	t.Cleanup(func() { stdin = old })
}

// The orphans are deleted; what Kubernetes knows, a volume a known
// snapshot was taken from, and a dataset the driver did not make (no
// properties of its own) are left.
func TestOrphansDeleteOnlyWhatTheDriverMade(t *testing.T) {
	r := newOrphanRig(t, "zfs")
	h := r.hosts["zfs"]
	var known, orphanVol, orphanSnap, keptVol, knownSnap string
	r.controller(t, func(c csipb.ControllerServer) {
		known = mkVolume(t, c, "zfs", "pvc-known")
		orphanVol = mkVolume(t, c, "zfs", "pvc-orphan")
		keptVol = mkVolume(t, c, "zfs", "pvc-snapsource")
		orphanSnap = mkSnapshot(t, c, known, "snap-orphan")
		knownSnap = mkSnapshot(t, c, keptVol, "snap-known")
	})
	// Made by hand where the driver keeps its volumes, and one that
	// imitates a volume name without the driver's managed_resource mark.
	for _, ds := range []string{"handmade", "pvc-lookalike"} {
		if err := h.Model.Create(h.Pool+"/k8s/zfs/"+ds, zfsmodel.Filesystem, map[string]string{"democratic-csi:csi_volume_name": ds}, zfsmodel.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	handles := filepath.Join(r.dir, "handles")
	r.write(t, handles, known+"\n"+knownSnap+"\n")

	var out, errb bytes.Buffer
	code := orphansCmd([]string{"--driver-config-file", r.main, "--handles", handles, "--delete", "--yes"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"deleted snapshot " + orphanSnap, "deleted volume " + orphanVol, "kept " + keptVol, "deleted 2 of 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	left := datasets(t, h, "zfs")
	for _, gone := range []string{"/pvc-orphan\n", "@snap-orphan\n"} {
		if strings.Contains(left, gone) {
			t.Errorf("%s was not deleted:\n%s", gone, left)
		}
	}
	for _, stays := range []string{"/pvc-known\n", "/pvc-snapsource\n", "/pvc-snapsource@snap-known\n", "/handmade\n", "/pvc-lookalike\n"} {
		if !strings.Contains(left, stays) {
			t.Errorf("%s was deleted:\n%s", stays, left)
		}
	}
}

// Without --yes the command asks; anything but "yes" deletes nothing.
func TestOrphansDeleteAsksFirst(t *testing.T) {
	r := newOrphanRig(t, "zfs")
	var orphan string
	r.controller(t, func(c csipb.ControllerServer) { orphan = mkVolume(t, c, "zfs", "pvc-orphan") })
	handles := filepath.Join(r.dir, "handles")
	r.write(t, handles, "\n")
	args := []string{"--driver-config-file", r.main, "--handles", handles, "--delete"}

	withStdin(t, "no\n")
	var out, errb bytes.Buffer
	if code := orphansCmd(args, &out, &errb); code != 1 || !strings.Contains(out.String(), "Type yes to continue") || !strings.Contains(out.String(), "nothing was deleted") {
		t.Fatalf("declined: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(datasets(t, r.hosts["zfs"], "zfs"), "/pvc-orphan\n") {
		t.Fatal("deleted although the confirmation was declined")
	}

	withStdin(t, "yes\n")
	out.Reset()
	if code := orphansCmd(args, &out, &errb); code != 0 || !strings.Contains(out.String(), "deleted volume "+orphan) {
		t.Fatalf("confirmed: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if strings.Contains(datasets(t, r.hosts["zfs"], "zfs"), "/pvc-orphan\n") {
		t.Fatal("confirmed, but the orphan is still there")
	}
}

// One backend unreachable: nothing is deleted anywhere (its volumes could
// not be told apart), and the report names the connection.
func TestOrphansDeleteUnreachableBackend(t *testing.T) {
	r := newOrphanRig(t, "up", "down")
	r.controller(t, func(c csipb.ControllerServer) {
		mkVolume(t, c, "up", "pvc-orphan")
		mkVolume(t, c, "down", "pvc-other")
	})
	r.hosts["down"].Close()
	handles := filepath.Join(r.dir, "handles")
	r.write(t, handles, "\n")
	var out, errb bytes.Buffer
	code := orphansCmd([]string{"--driver-config-file", r.main, "--handles", handles, "--delete", "--yes", "--timeout", "30s"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d; want 1\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"connection down", "nothing was deleted"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	t.Logf("stderr:\n%s", errb.String())
	if strings.Contains(out.String(), "deleted") {
		t.Errorf("stdout reports a deletion:\n%s", out.String())
	}
	if !strings.Contains(datasets(t, r.hosts["up"], "up"), "/pvc-orphan\n") {
		t.Fatal("the reachable backend's orphan was deleted although another backend could not be listed")
	}
}

func TestOrphansDeleteNeedsYesWithHandlesOnStdin(t *testing.T) {
	var out, errb bytes.Buffer
	code := orphansCmd([]string{"--driver-config-file", "x.yaml", "--handles", "-", "--delete"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "needs --yes") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
