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
)

// orphans over a proxy with a zfs-generic-nfs connection on the simulated
// host: a volume and a snapshot Kubernetes does not know are reported, a
// handle whose volume is gone is reported the other way, and nothing is
// deleted.
func TestOrphansReport(t *testing.T) {
	h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	dir := t.TempDir()
	conns := filepath.Join(dir, "connections")
	if err := os.Mkdir(conns, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(conns, "zfs.yaml"), h.DriverConfig("zfs-generic-nfs", "orphans", ""))
	main := filepath.Join(dir, "main.yaml")
	write(main, "driver: proxy\nproxy:\n  configFolder: "+conns+"\n")

	p, err := assembly.New(assembly.Options{ConfigFile: main, CSIName: "x", Modes: []string{assembly.ModeController}, NodeName: "n",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	capab := []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
	var ids []string
	for _, n := range []string{"pvc-known", "pvc-orphan"} {
		v, err := p.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: n, VolumeCapabilities: capab,
			Parameters: map[string]string{"connection": "zfs"}, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.GetVolume().GetVolumeId())
	}
	snap, err := p.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-orphan", SourceVolumeId: ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()

	handles := filepath.Join(dir, "handles")
	write(handles, ids[0]+"\nv:zfs/pvc-gone\n# a comment\n")
	var out, errb bytes.Buffer
	if code := orphansCmd([]string{"--driver-config-file", main, "--handles", handles}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	report := out.String()
	for _, want := range []string{
		"volumes on the backend with no PersistentVolume: 1\n  " + ids[1] + "\n",
		"snapshots on the backend with no VolumeSnapshotContent: 1\n  " + snap.GetSnapshot().GetSnapshotId() + "\n",
		"whose volume is gone from the backend: 1\n  v:zfs/pvc-gone\n",
		"nothing was deleted",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "  "+ids[0]+"\n") {
		t.Errorf("the known volume is reported:\n%s", report)
	}
	// Read-only: everything is still there.
	var zout, zerr strings.Builder
	if code := h.Model.ZFS([]string{"list", "-H", "-t", "all", "-o", "name", "-r", h.Pool + "/k8s/orphans"}, nil, &zout, &zerr); code != 0 {
		t.Fatal(zerr.String())
	}
	if n := strings.Count(zout.String(), "pvc-"); n != 3 { // two volumes and the snapshot
		t.Errorf("after orphans the host holds:\n%s", zout.String())
	}
}

// An unreachable backend gives no report (its volumes would look missing)
// and a non-zero exit; nothing is touched.
func TestOrphansUnreachableBackend(t *testing.T) {
	h, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.DriverConfig("zfs-generic-nfs", "gone", "")
	h.Close()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(main, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	handles := filepath.Join(dir, "handles")
	if err := os.WriteFile(handles, []byte("pvc-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := orphansCmd([]string{"--driver-config-file", main, "--handles", handles, "--timeout", "20s"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "no report") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestOrphansUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := orphansCmd(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "read-only") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
