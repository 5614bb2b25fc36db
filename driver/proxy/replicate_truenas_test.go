package proxy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	_ "github.com/switchyard-csi/switchyard/driver/truenas"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

func startTrueNAS(t *testing.T) *truenashost.Host {
	t.Helper()
	h, err := truenashost.Start(truenashost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func tnGet(t *testing.T, m *zfsmodel.Model, ds, prop string) string {
	t.Helper()
	var out, errb strings.Builder
	if code := m.ZFS([]string{"get", "-H", "-o", "value", prop, ds}, nil, &out, &errb); code != 0 {
		t.Fatalf("zfs get %s %s: %s", prop, ds, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// Two freenas-api-nfs connections of one TrueNAS (different parents): a
// clone and a restore across them are made by the middleware's own
// replication (replication.run_onetime, LOCAL), not streamed through the
// controller; the copy holds the data and is a fresh volume of the target
// connection (its labels, its own NFS share); the source keeps its own.
func TestCloneAcrossTrueNASAPIConnectionsOfOneSystem(t *testing.T) {
	r := newRig(t)
	h := startTrueNAS(t)
	m := h.Server.Model()
	r.write("tn-old", h.DriverConfig("freenas-api-nfs", "old", ""))
	r.write("tn-new", h.DriverConfig("freenas-api-nfs", "new", ""))
	ctx := context.Background()
	src, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "tn-old"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	srcDS := h.Pool + "/k8s/old/pvc-src"
	dir, ok := m.HostPath(tnGet(t, m, srcDS, "mountpoint"))
	if !ok {
		t.Fatalf("%s is not mounted", srcDS)
	}
	must(t, os.WriteFile(filepath.Join(dir, "data.txt"), []byte("replicated by the middleware\n"), 0o644))

	moved, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-moved", "tn-new", src.GetVolume().GetVolumeId()))
	if err != nil {
		t.Fatalf("clone across TrueNAS API connections of one system: %v", err)
	}
	if got := moved.GetVolume().GetVolumeId(); got != "v:tn-new/pvc-moved" {
		t.Fatalf("handle %s", got)
	}
	dstDS := h.Pool + "/k8s/new/pvc-moved"
	ddir, ok := m.HostPath(tnGet(t, m, dstDS, "mountpoint"))
	if !ok {
		t.Fatalf("%s is not mounted", dstDS)
	}
	if b, err := os.ReadFile(filepath.Join(ddir, "data.txt")); err != nil || string(b) != "replicated by the middleware\n" {
		t.Fatalf("copied data %q, %v", b, err)
	}
	for prop, want := range map[string]string{
		"democratic-csi:csi_volume_name":   "pvc-moved",
		"democratic-csi:provision_success": "true",
		"democratic-csi:managed_resource":  "true",
	} {
		if got := tnGet(t, m, dstDS, prop); got != want {
			t.Errorf("%s = %q; want %q", prop, got, want)
		}
	}
	shareSrc, shareDst := tnGet(t, m, srcDS, "democratic-csi:freenas_nfs_share_id"), tnGet(t, m, dstDS, "democratic-csi:freenas_nfs_share_id")
	if shareDst == "" || shareDst == "-" || shareDst == shareSrc {
		t.Errorf("the copy's NFS share id %q; want one of its own (the source's is %q)", shareDst, shareSrc)
	}
	if vc := moved.GetVolume().GetVolumeContext(); vc["share"] != "/mnt/"+dstDS {
		t.Errorf("volume context %v; want the share of %s", vc, dstDS)
	}
	var out, errb strings.Builder
	m.ZFS([]string{"list", "-H", "-o", "name", "-t", "snapshot", "-r", h.Pool + "/k8s"}, nil, &out, &errb)
	if s := strings.TrimSpace(out.String()); s != "" {
		t.Errorf("snapshots left after the copy: %s", s)
	}
	// A restore from a snapshot of the old connection.
	snap, err := r.ctl.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: src.GetVolume().GetVolumeId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-restored", "tn-new", snap.GetSnapshot().GetSnapshotId())); err != nil {
		t.Fatalf("restore across: %v", err)
	}
	if got := tnGet(t, m, h.Pool+"/k8s/new/pvc-restored", "democratic-csi:provision_success"); got != "true" {
		t.Fatalf("restored volume provision_success %q", got)
	}
	// A retry answers from the target without copying again.
	again, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-moved", "tn-new", src.GetVolume().GetVolumeId()))
	if err != nil || again.GetVolume().GetVolumeId() != "v:tn-new/pvc-moved" {
		t.Fatalf("retry: %v %v", again, err)
	}
}

// Two TrueNAS systems: FAILED_PRECONDITION naming both and what to
// configure; nothing is made on the target.
func TestCloneAcrossTrueNASSystemsSaysWhatToConfigure(t *testing.T) {
	r := newRig(t)
	ha, hb := startTrueNAS(t), startTrueNAS(t)
	r.write("tn-a", ha.DriverConfig("freenas-api-nfs", "old", ""))
	r.write("tn-b", hb.DriverConfig("freenas-api-nfs", "new", ""))
	ctx := context.Background()
	src, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "tn-a"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.ctl.CreateVolume(ctx, cloneReq("pvc-moved", "tn-b", src.GetVolume().GetVolumeId()))
	wantCode(t, "two systems", err, codes.FailedPrecondition, "different TrueNAS systems", "SSH Connections", "replication.sshCredentials", "tn-a", "tn-b")
	var out, errb strings.Builder
	hb.Server.Model().ZFS([]string{"list", "-H", "-o", "name", "-r", hb.Pool + "/k8s"}, nil, &out, &errb)
	if strings.Contains(out.String(), "pvc-moved") {
		t.Fatalf("something was made on the target: %s", out.String())
	}
}
