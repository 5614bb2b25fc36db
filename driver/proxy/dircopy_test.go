package proxy

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	_ "github.com/switchyard-csi/switchyard/driver/localhostpath"
	_ "github.com/switchyard-csi/switchyard/driver/shareclient"
	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"
)

// clientConn is a share-client connection file on a plain directory:
// checkControllerMount off stands in for the share mounted at base.
func clientConn(driver, section, base string, mountCheck bool) string {
	s := "driver: " + driver + "\n" + section + ":\n  shareHost: 192.0.2.10\n  shareBasePath: /export\n  controllerBasePath: " + base + "\n"
	if !mountCheck {
		s += "  checkControllerMount: false\n"
	}
	return s
}

// Every pair of directory backends copies: local-hostpath into
// nfs-client, nfs-client into smb-client (a volume and a snapshot), and
// back into local-hostpath; each new volume is the target connection's
// own, with the data.
func TestCopyBetweenDirectoryBackends(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.Topology.Type = TopologyNode })
	hp, nfs, smb := filepath.Join(r.dir, "hp"), filepath.Join(r.dir, "nfs"), filepath.Join(r.dir, "smb")
	for _, d := range []string{nfs, smb} {
		must(t, os.MkdirAll(d, 0o755))
	}
	r.write("hp", "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+hp+"\n  controllerBasePath: "+hp+"\n")
	r.write("nfs-a", clientConn("nfs-client", "nfs", nfs, false))
	r.write("smb-b", clientConn("smb-client", "smb", smb, false))
	ctx := context.Background()

	src, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "hp"}, nil))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(hp, "v", "pvc-src", "data.txt"), []byte("moved twice\n"), 0o600))

	steps := []struct{ name, conn, source, dir string }{
		{"pvc-on-nfs", "nfs-a", src.GetVolume().GetVolumeId(), nfs},
		{"pvc-on-smb", "smb-b", "v:nfs-a/pvc-on-nfs", smb},
		{"pvc-home", "hp", "v:smb-b/pvc-on-smb", hp},
	}
	for _, s := range steps {
		v, err := r.ctl.CreateVolume(ctx, cloneReq(s.name, s.conn, s.source))
		if err != nil {
			t.Fatalf("%s from %s: %v", s.name, s.source, err)
		}
		if want := "v:" + s.conn + "/" + s.name; v.GetVolume().GetVolumeId() != want {
			t.Fatalf("handle %s; want %s", v.GetVolume().GetVolumeId(), want)
		}
		got, err := os.ReadFile(filepath.Join(s.dir, "v", s.name, "data.txt"))
		if err != nil || string(got) != "moved twice\n" {
			t.Fatalf("%s: data %q, %v", s.name, got, err)
		}
		must(t, r.validate(v.GetVolume().GetVolumeId()))
	}

	// A snapshot on nfs-client restored into smb-client.
	snap, err := r.ctl.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-nfs", SourceVolumeId: "v:nfs-a/pvc-on-nfs"})
	must(t, err)
	if _, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-restored", "smb-b", snap.GetSnapshot().GetSnapshotId())); err != nil {
		t.Fatalf("restore nfs-client -> smb-client: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(smb, "v", "pvc-restored", "data.txt")); err != nil || string(got) != "moved twice\n" {
		t.Fatalf("restored data %q, %v", got, err)
	}
}

// A share that is not mounted on the controller is named, at either end,
// and nothing is made on the other.
func TestCopyFromUnmountedShareIsRefused(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.Topology.Type = TopologyNode })
	hp, nfs := filepath.Join(r.dir, "hp"), filepath.Join(r.dir, "nfs")
	must(t, os.MkdirAll(nfs, 0o755))
	r.write("hp", "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+hp+"\n  controllerBasePath: "+hp+"\n")
	// The mount check on: a temporary directory is not an NFS mount.
	r.write("nfs-a", clientConn("nfs-client", "nfs", nfs, true))
	ctx := context.Background()
	_, err := r.ctl.CreateVolume(ctx, setReq("pvc-src", map[string]string{ConnectionParameter: "hp"}, nil))
	must(t, err)

	_, err = r.ctl.CreateVolume(ctx, cloneReq("pvc-to-nfs", "nfs-a", "v:hp/pvc-src"))
	wantCode(t, "into an unmounted share", err, codes.FailedPrecondition, "192.0.2.10:/export", "not mounted", "nfs.checkControllerMount")
	if entries, _ := os.ReadDir(nfs); len(entries) != 0 {
		t.Fatalf("something was made in the unmounted share's mount point: %v", entries)
	}

	_, err = r.ctl.CreateVolume(ctx, cloneReq("pvc-from-nfs", "hp", "v:nfs-a/pvc-x"))
	wantCode(t, "from an unmounted share", err, codes.FailedPrecondition, "192.0.2.10:/export", "not mounted")
	if _, err := os.Stat(filepath.Join(hp, "v", "pvc-from-nfs")); !os.IsNotExist(err) {
		t.Fatalf("a target was made for a source on an unmounted share: %v", err)
	}
}

// democratic-csi's filecopy snapshot ids (a query string) restore across
// connections like switchyard's own.
func TestSnapshotDirOfDemocraticIDs(t *testing.T) {
	for id, want := range map[string]string{
		"snap-1": "snap-1",
		"snapshot_driver=filecopy&snapshot_id=snap-2": "snap-2",
		"snapshot_id=snap-3":                          "snap-3",
	} {
		if got := snapshotDir(id); got != want {
			t.Errorf("snapshotDir(%q) = %q; want %q", id, got, want)
		}
	}
}

// A file volume between a ZFS export and a share client cannot be
// copied: the error says which pairs copy and what to do, and nothing
// is made.
func TestCopyZFSExportToShareClientRefused(t *testing.T) {
	r := newRig(t, func(s *Settings) { s.Topology.Type = TopologyNode })
	nfs := filepath.Join(r.dir, "nfs")
	must(t, os.MkdirAll(nfs, 0o755))
	r.write("nfs-a", clientConn("nfs-client", "nfs", nfs, false))
	r.write("zfs-b", "driver: zfs-generic-nfs\nsshConnection:\n  host: 192.0.2.20\n  username: root\n  password: pw\nzfs:\n  datasetParentName: tank/k\n  detachedSnapshotsDatasetParentName: tank/s\nnfs:\n  shareStrategy: setDatasetProperties\n  shareStrategySetDatasetProperties:\n    properties: {sharenfs: \"on\"}\n  shareHost: 192.0.2.20\n")
	_, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "nfs-a"}, nil))
	must(t, err)
	_, err = r.ctl.CreateVolume(context.Background(), cloneReq("pvc-x", "zfs-b", "v:nfs-a/pvc-src"))
	wantCode(t, "nfs-client -> zfs-generic-nfs", err, codes.InvalidArgument, "nfs-a (nfs-client)", "zfs-b (zfs-generic-nfs)", "directory backends", "rsync")
}
