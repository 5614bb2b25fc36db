package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// The nfs-client connection's share as nodes would mount it. Nothing
// serves it: this host's kernel has no NFS client or server, so a local
// directory stands in for the controller's mount of it.
const (
	nfsClientHost  = "127.0.0.1"
	nfsClientShare = "/export/demo"
)

// nfsClientBase is where the controller "has the share mounted": a plain
// directory of the scratch folder.
func nfsClientBase(dir string) string { return filepath.Join(dir, "nfs-share") }

// nfsClientConnections makes the stand-in share and returns the
// connection file. checkControllerMount: false is the documented switch
// for a share that reaches the controller other than by an NFS mount;
// without it every call would fail, rightly, with FAILED_PRECONDITION.
func nfsClientConnections(dir string) (map[string]string, error) {
	base := nfsClientBase(dir)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	return map[string]string{filepath.Join(dir, "connections", "nfs-client.yaml"): fmt.Sprintf(`driver: nfs-client
nfs:
  shareHost: %s
  shareBasePath: %s
  controllerBasePath: %s
  checkControllerMount: false   # a local directory stands in for the NFS mount
  dirPermissionsMode: "0777"
`, nfsClientHost, nfsClientShare, base)}, nil
}

// nfsClientTour makes volumes as subdirectories of an existing share:
// create, write into it on the share, snapshot (a copy), change the file,
// restore from the snapshot and read the old bytes back, expand, delete.
func (w *walk) nfsClientTour(ctx context.Context, c *csiclient.Client) error {
	w.say("nfs-client: the share %s:%s is a local directory here (%s), as this host has no kernel NFS client;", nfsClientHost, nfsClientShare, nfsClientBase(w.dir))
	w.say("the controller's work on it is the same as on a mounted share, and `make test-clients-vm` proves it against a real nfsd")
	var vol, restored *csipb.Volume
	var snap *csipb.Snapshot
	// onShare is the controller's view of a volume's directory.
	onShare := func(v *csipb.Volume) string {
		return filepath.Join(nfsClientBase(w.dir), strings.TrimPrefix(v.GetVolumeContext()["share"], nfsClientShare))
	}
	steps := []struct {
		call, args string
		fn         func() (string, error)
	}{
		{"CreateVolume", "name=pvc-notes connection=nfs-client 1GiB", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-notes", "nfs-client", nil))
			vol = r.GetVolume()
			vc := vol.GetVolumeContext()
			return fmt.Sprintf("volume_id=%s nfs %s:%s (a directory on the share)", vol.GetVolumeId(), vc["server"], vc["share"]), err
		}},
		{"write", "notes.txt into pvc-notes on the share", func() (string, error) {
			p := filepath.Join(onShare(vol), "notes.txt")
			return "wrote " + p + " (what a pod writes through its NFS mount)", os.WriteFile(p, []byte("first draft\n"), 0o644)
		}},
		{"CreateSnapshot", "name=snap-notes of pvc-notes", func() (string, error) {
			r, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-notes", SourceVolumeId: vol.GetVolumeId()})
			snap = r.GetSnapshot()
			return "snapshot_id=" + snap.GetSnapshotId() + " (a copy of the directory, reflinked where the file system can)", err
		}},
		{"write", "overwrite notes.txt", func() (string, error) {
			return "the volume now says \"second draft\"", os.WriteFile(filepath.Join(onShare(vol), "notes.txt"), []byte("second draft\n"), 0o644)
		}},
		{"CreateVolume", "name=pvc-notes-restored from the snapshot", func() (string, error) {
			r, err := c.Controller.CreateVolume(ctx, createReq("pvc-notes-restored", "nfs-client", &csipb.VolumeContentSource{
				Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshotId()}}}))
			restored = r.GetVolume()
			if err != nil {
				return "", err
			}
			b, err := os.ReadFile(filepath.Join(onShare(restored), "notes.txt"))
			if err == nil && string(b) != "first draft\n" {
				err = fmt.Errorf("the restored notes.txt holds %q, not the snapshot's %q", b, "first draft\n")
			}
			return fmt.Sprintf("volume_id=%s holds notes.txt = %q (the snapshot's bytes)", restored.GetVolumeId(), strings.TrimSpace(string(b))), err
		}},
		{"ControllerExpandVolume", "pvc-notes to 2GiB", func() (string, error) {
			r, err := c.Controller.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: vol.GetVolumeId(),
				CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: mountCap})
			return fmt.Sprintf("capacity=%dGiB (recorded: a directory on a share has no size of its own)", r.GetCapacityBytes()/gib), err
		}},
	}
	for _, s := range steps {
		if err := w.step(s.call, s.args, s.fn); err != nil {
			return err
		}
	}
	w.say("on the share (democratic-csi's layout: v/<volume>, s/<snapshot>):")
	for _, sub := range []string{"v", "s"} {
		ents, _ := os.ReadDir(filepath.Join(nfsClientBase(w.dir), sub))
		for _, e := range ents {
			w.say("  %s/%s", sub, e.Name())
		}
	}
	w.say("(a node would mount %s:%s/v/<volume> with mount -t nfs; nothing serves this share, so the demo stops at the controller)", nfsClientHost, nfsClientShare)
	if err := w.deleteAll(ctx, c, []deletion{{"DeleteVolume", restored.GetVolumeId()}, {"DeleteSnapshot", snap.GetSnapshotId()}, {"DeleteVolume", vol.GetVolumeId()}}); err != nil {
		return err
	}
	return w.step("ls v/ s/", "on the share after the deletes", func() (string, error) {
		var left []string
		for _, sub := range []string{"v", "s"} {
			ents, err := os.ReadDir(filepath.Join(nfsClientBase(w.dir), sub))
			if err != nil && !os.IsNotExist(err) {
				return "", err
			}
			for _, e := range ents {
				left = append(left, sub+"/"+e.Name())
			}
		}
		if len(left) > 0 {
			return "", fmt.Errorf("left on the share: %s", strings.Join(left, ", "))
		}
		return "no volume or snapshot directory left", nil
	})
}
