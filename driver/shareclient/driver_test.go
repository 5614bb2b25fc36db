package shareclient

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// testConfig is a valid config of driver type name whose controllerBasePath
// is base (a temp dir standing in for the mounted share).
func testConfig(name, section, base string) config.Tree {
	return config.Tree{
		"driver":      name,
		"instance_id": "inst-1",
		section: map[string]any{
			"shareHost":          "nas.example",
			"shareBasePath":      "/export/k8s/",
			"controllerBasePath": base,
		},
	}
}

// newTestDriver builds a driver on a temp dir that passes the mount check
// as the kind's file system.
func newTestDriver(t *testing.T, k kind) (*Driver, string) {
	t.Helper()
	base := t.TempDir()
	d, err := newDriver(k, backend.Options{Config: testConfig(k.name, k.section, base), File: "test.yaml", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	d.sh.statfs = func(string) (int64, error) { return k.magics[0], nil }
	return d, base
}

func rwx() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}}
}

func code(err error) codes.Code { return status.Code(err) }

func TestVolumeContextPerKind(t *testing.T) {
	want := map[string]volumecontext.Attachment{
		"nfs-client":    volumecontext.NFS{Server: "nas.example", Share: "/export/k8s/v/pvc-1"},
		"smb-client":    volumecontext.SMB{Server: "nas.example", Share: "export/k8s/v/pvc-1"},
		"lustre-client": volumecontext.Lustre{Server: "nas.example", Share: "/export/k8s/v/pvc-1"},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			d, base := newTestDriver(t, k)
			resp, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: rwx()})
			if err != nil {
				t.Fatalf("CreateVolume: %v", err)
			}
			vc, err := volumecontext.Decode(resp.GetVolume().GetVolumeContext())
			if err != nil {
				t.Fatalf("decode %v: %v", resp.GetVolume().GetVolumeContext(), err)
			}
			if vc.Attach != want[k.name] {
				t.Errorf("attach = %#v, want %#v", vc.Attach, want[k.name])
			}
			if vc.Provisioner.Driver != k.name || vc.Provisioner.InstanceID != "inst-1" {
				t.Errorf("provisioner = %+v", vc.Provisioner)
			}
			if len(resp.GetVolume().GetAccessibleTopology()) != 0 {
				t.Errorf("a share volume has no topology, got %v", resp.GetVolume().GetAccessibleTopology())
			}
			if fi, err := os.Stat(filepath.Join(base, "v", "pvc-1")); err != nil || !fi.IsDir() {
				t.Fatalf("volume directory: %v", err)
			}
		})
	}
}

func TestFsTypeAndBlockRefused(t *testing.T) {
	d, _ := newTestDriver(t, kinds[0])
	bad := []*csi.VolumeCapability{
		{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}, AccessMode: rwx()[0].AccessMode},
		{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "ext4"}}, AccessMode: rwx()[0].AccessMode},
	}
	for _, c := range bad {
		_, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "x", VolumeCapabilities: []*csi.VolumeCapability{c}})
		if code(err) != codes.InvalidArgument {
			t.Errorf("%v: got %v, want INVALID_ARGUMENT", c, err)
		}
	}
	ok := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: "nfs"}}, AccessMode: rwx()[0].AccessMode}}
	if _, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "y", VolumeCapabilities: ok}); err != nil {
		t.Errorf("fs_type nfs: %v", err)
	}
}

// TestShareNotMounted: nothing is created when the share is missing, on
// another file system, or read-only; the error names server and share.
func TestShareNotMounted(t *testing.T) {
	cases := []struct {
		name  string
		setup func(d *Driver, base string)
		want  string
	}{
		{"missing mount point", func(d *Driver, base string) {
			d.SetBase(filepath.Join(base, "absent"))
		}, "is not mounted on the controller"},
		{"local file system", func(d *Driver, base string) {
			d.sh.statfs = func(string) (int64, error) { return 0xef53, nil } // ext4
		}, "not nfs"},
		{"read-only", func(d *Driver, base string) {
			if os.Geteuid() == 0 {
				d.sh.statfs = func(string) (int64, error) { return nfsMagic, nil }
				// root ignores modes: a file as mount point instead
				// (TestShareMountedReadOnly mounts a real read-only one)
				f := filepath.Join(base, "file")
				_ = os.WriteFile(f, nil, 0o600)
				d.SetBase(f)
				return
			}
			_ = os.Chmod(base, 0o555)
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, base := newTestDriver(t, kinds[0])
			c.setup(d, base)
			_, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: rwx()})
			if code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want FAILED_PRECONDITION", err)
			}
			msg := status.Convert(err).Message()
			if !strings.Contains(msg, "nas.example:/export/k8s") || !strings.Contains(msg, c.want) {
				t.Errorf("message %q should name the share and say %q", msg, c.want)
			}
			if _, err := os.Stat(filepath.Join(base, "v", "pvc-1")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("volume directory made anyway: %v", err)
			}
			if _, err := d.GetCapacity(context.Background(), &csi.GetCapacityRequest{}); code(err) != codes.FailedPrecondition {
				t.Errorf("GetCapacity: got %v, want FAILED_PRECONDITION", err)
			}
		})
	}
}

func TestMountCheckCanBeTurnedOff(t *testing.T) {
	base := t.TempDir()
	cfg := testConfig("nfs-client", "nfs", base)
	cfg["nfs"].(map[string]any)["checkControllerMount"] = false
	d, err := newDriver(kinds[0], backend.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateVolume(context.Background(), &csi.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: rwx()}); err != nil {
		t.Fatalf("CreateVolume on a local dir with the check off: %v", err)
	}
}

func TestConfigProblemsNameKeys(t *testing.T) {
	cases := []struct {
		edit func(s map[string]any)
		key  string
	}{
		{func(s map[string]any) { delete(s, "shareHost") }, "nfs.shareHost"},
		{func(s map[string]any) { s["shareHost"] = "a b" }, "nfs.shareHost"},
		{func(s map[string]any) { delete(s, "shareBasePath") }, "nfs.shareBasePath"},
		{func(s map[string]any) { s["controllerBasePath"] = "rel" }, "nfs.controllerBasePath"},
		{func(s map[string]any) { s["dirPermissionsMode"] = "999" }, "nfs.dirPermissionsMode"},
		{func(s map[string]any) { s["checkControllerMount"] = "no" }, "nfs.checkControllerMount"},
		{func(s map[string]any) { s["snapshots"] = map[string]any{"default_driver": "restic"} }, "nfs.snapshots.default_driver"},
	}
	for _, c := range cases {
		cfg := testConfig("nfs-client", "nfs", "/mnt/k8s")
		c.edit(cfg["nfs"].(map[string]any))
		ps := kinds[0].validate(cfg)
		if len(ps) != 1 || ps[0].Key != c.key {
			t.Errorf("want one problem naming %s, got %v", c.key, ps)
		}
	}
	if ps := kinds[1].validate(config.Tree{"driver": "smb-client"}); len(ps) != 1 || ps[0].Key != "smb" {
		t.Errorf("missing section: %v", ps)
	}
}

// TestSnapshotAndCloneCopyContent: a snapshot keeps the data of its moment,
// a restore and a clone carry it.
func TestSnapshotAndCloneCopyContent(t *testing.T) {
	ctx := context.Background()
	d, base := newTestDriver(t, kinds[1])
	if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: "src", VolumeCapabilities: rwx()}); err != nil {
		t.Fatal(err)
	}
	file := func(vol string) string { return filepath.Join(base, "v", vol, "data") }
	if err := os.WriteFile(file("src"), []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	snap, err := d.CreateSnapshot(ctx, &csi.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: "src"})
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	if err := os.WriteFile(file("src"), []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	restore := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}}
	clone := &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: "src"}}}
	for name, src := range map[string]*csi.VolumeContentSource{"restored": restore, "cloned": clone} {
		if _, err := d.CreateVolume(ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: rwx(), VolumeContentSource: src}); err != nil {
			t.Fatalf("CreateVolume %s: %v", name, err)
		}
	}
	for vol, want := range map[string]string{"restored": "one", "cloned": "two"} {
		got, err := os.ReadFile(file(vol))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", vol, got, err, want)
		}
		if fi, err := os.Stat(file(vol)); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode not kept: %v %v", vol, fi, err)
		}
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "src"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteSnapshot(ctx, &csi.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(base, "s"))
	if len(entries) != 0 {
		t.Errorf("snapshot directory left: %v", entries)
	}
}

func TestFsMagicOfRealPath(t *testing.T) {
	m, err := fsMagic(t.TempDir())
	if err != nil || m == 0 {
		t.Fatalf("fsMagic: %x %v", m, err)
	}
	if _, err := fsMagic("/nonexistent/x"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("missing path: %v", err)
	}
}
