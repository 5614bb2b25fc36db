package sanity

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// TestShareClientsOnKernel proves nfs-client and smb-client against the
// storage VM's nfsd and Samba: an existing export and share (made with the
// kernel reconciler, as an admin would), mounted on the "controller" with
// the kernel's NFS and CIFS clients, and a plugin behind the proxy with
// both connections (the mount check on). Each volume is staged and
// published with the real clients, written, snapshotted, restored and read
// back; the bytes are checked on the server's side too. A connection whose
// share is not mounted is refused with FAILED_PRECONDITION naming it.
//
// It runs only inside the VM:
//
//	SANITY_VM_RUN='^TestShareClientsOnKernel$' go test ./sanity -run '^TestSanityInVM$'
func TestShareClientsOnKernel(t *testing.T) {
	if !kernelMode() {
		// Not a tier of its own: TestSanityInVM (tier vm) runs it inside
		// the VM (in its default set, and alone with make
		// test-clients-vm), so on the host it is never something
		// LAB_REQUIRE=vm should demand.
		t.Skip("runs inside the storage VM, as part of TestSanityInVM; alone: SANITY_VM_RUN='^TestShareClientsOnKernel$' go test ./sanity -run '^TestSanityInVM$' (make test-clients-vm)")
	}
	r, reason := vmKernel()
	testtier.Need(t, testtier.VM, r != nil, "in the VM but the kernel targets are unusable: "+reason)
	base := t.TempDir()
	dir := func(p string) string {
		d := filepath.Join(base, p)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	export, smbDir, ctlNFS, ctlSMB, unmounted := dir("export"), dir("smbshare"), dir("ctl-nfs"), dir("ctl-smb"), dir("not-mounted")
	// Two disks for node-manual's static block PVs, served by the kernel's
	// NVMe/TCP and iSCSI targets as an admin would set them up by hand.
	disks := dir("disks")
	for _, f := range []string{"nvme.img", "iscsi.img"} {
		if err := os.WriteFile(filepath.Join(disks, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(disks, f), 128<<20); err != nil {
			t.Fatal(err)
		}
	}
	const owner = "sanity-clients"
	if err := r.Apply(owner, kernel.State{
		NFS: []kernel.Export{{Path: export}},
		SMB: []kernel.Share{{Name: "k8s", Path: smbDir}},
		NVMe: []kernel.Subsystem{{NQN: manualNQN, AllowAnyHost: true, Namespaces: []kernel.Namespace{{NSID: 1, Path: filepath.Join(disks, "nvme.img")}},
			Listeners: []kernel.Listener{{Addr: "127.0.0.1", Port: 4420}}}},
		ISCSI: []kernel.Target{{IQN: manualIQN, LUNs: []kernel.LUN{{LUN: 0, Path: filepath.Join(disks, "iscsi.img")}},
			Portals: []kernel.Portal{{Addr: "127.0.0.1", Port: 3260}}}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(owner); err != nil {
			t.Errorf("removing the export and share: %v", err)
		}
	})
	mount := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %s: %v: %s", strings.Join(args, " "), err, out)
		}
		target := args[len(args)-1]
		t.Cleanup(func() {
			if out, err := exec.Command("umount", target).CombinedOutput(); err != nil {
				t.Errorf("umount %s: %v: %s", target, err, out)
			}
		})
	}
	mount("-t", "nfs", "127.0.0.1:"+export, ctlNFS)
	mount("-t", "cifs", "-o", "username="+smbUser+",password="+smbPassword, "//127.0.0.1/k8s", ctlSMB)

	conns := map[string]string{
		"nfs":  "driver: nfs-client\nnfs:\n  shareHost: 127.0.0.1\n  shareBasePath: " + export + "\n  controllerBasePath: " + ctlNFS + "\n",
		"smb":  "driver: smb-client\nsmb:\n  shareHost: 127.0.0.1\n  shareBasePath: /k8s\n  controllerBasePath: " + ctlSMB + "\n",
		"gone": "driver: nfs-client\nnfs:\n  shareHost: 127.0.0.1\n  shareBasePath: " + export + "\n  controllerBasePath: " + unmounted + "\n",
	}
	tg := target{main: "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n", connections: conns}
	pdir := dir("plugin")
	mainFile, err := writeTarget(tg, pdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(pdir, "csi.sock")
	t.Cleanup(serve(t, mainFile, filepath.Join(pdir, "node-state"), sock, slog.New(slog.NewTextHandler(io.Discard, nil))))
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	rwx := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
	create := func(conn, name string, src *csipb.VolumeContentSource) (*csipb.Volume, error) {
		cr, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, Parameters: map[string]string{"connection": conn},
			VolumeCapabilities: []*csipb.VolumeCapability{rwx}, VolumeContentSource: src})
		return cr.GetVolume(), err
	}

	_, err = create("gone", "pvc-gone", nil)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "127.0.0.1:"+export) {
		t.Errorf("unmounted share: got %v, want FAILED_PRECONDITION naming 127.0.0.1:%s", err, export)
	}

	t.Run("node-manual", func(t *testing.T) { nodeManualStaticPVs(ctx, t, c, pdir, export) })

	for conn, server := range map[string]string{"nfs": export, "smb": smbDir} {
		t.Run(conn, func(t *testing.T) {
			secrets := map[string]string{}
			if conn == "smb" {
				secrets = map[string]string{"username": smbUser, "password": smbPassword}
			}
			// use stages and publishes vol, runs fn on the published path and
			// takes it down again.
			use := func(vol *csipb.Volume, fn func(path string)) {
				t.Helper()
				staging, target := filepath.Join(pdir, vol.GetVolumeId()+"-st"), filepath.Join(pdir, vol.GetVolumeId()+"-tg")
				if err := os.MkdirAll(staging, 0o750); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
					VolumeCapability: rwx, VolumeContext: vol.GetVolumeContext(), Secrets: secrets}); err != nil {
					t.Fatalf("NodeStageVolume: %v", err)
				}
				if _, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
					TargetPath: target, VolumeCapability: rwx, VolumeContext: vol.GetVolumeContext()}); err != nil {
					t.Fatalf("NodePublishVolume: %v", err)
				}
				fn(target)
				if _, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target}); err != nil {
					t.Fatalf("NodeUnpublishVolume: %v", err)
				}
				if _, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging}); err != nil {
					t.Fatalf("NodeUnstageVolume: %v", err)
				}
			}
			vol, err := create(conn, "pvc-"+conn, nil)
			if err != nil {
				t.Fatalf("CreateVolume: %v", err)
			}
			// The proxy handle carries the connection; the directory is the id's last part.
			leaf := vol.GetVolumeId()[strings.LastIndex(vol.GetVolumeId(), "/")+1:]
			use(vol, func(p string) {
				if err := os.WriteFile(filepath.Join(p, "data"), []byte("first "+conn), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			if b, err := os.ReadFile(filepath.Join(server, "v", leaf, "data")); err != nil || string(b) != "first "+conn {
				t.Errorf("on the server: %q %v", b, err)
			}
			snap, err := c.Controller.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-" + conn, SourceVolumeId: vol.GetVolumeId()})
			if err != nil {
				t.Fatalf("CreateSnapshot: %v", err)
			}
			use(vol, func(p string) {
				if err := os.WriteFile(filepath.Join(p, "data"), []byte("second"), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			restored, err := create(conn, "pvc-"+conn+"-restored", &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
				Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}})
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			use(restored, func(p string) {
				if b, err := os.ReadFile(filepath.Join(p, "data")); err != nil || string(b) != "first "+conn {
					t.Errorf("restored volume holds %q %v, want the snapshot's bytes", b, err)
				}
			})
			for _, id := range []string{restored.GetVolumeId(), vol.GetVolumeId()} {
				if _, err := c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id}); err != nil {
					t.Errorf("DeleteVolume %s: %v", id, err)
				}
			}
			if _, err := c.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: snap.GetSnapshot().GetSnapshotId()}); err != nil {
				t.Errorf("DeleteSnapshot: %v", err)
			}
			if left, _ := os.ReadDir(filepath.Join(server, "v")); len(left) != 0 {
				t.Errorf("left on the server: %v", left)
			}
		})
	}
}

// The static block PVs' target names.
const (
	manualNQN = "nqn.2003-01.org.linux-nvme:sanity-node-manual"
	manualIQN = "iqn.2003-01.org.linux-iscsi.lab:sanity-node-manual"
)

// nodeManualStaticPVs stages node-manual PVs written like democratic-csi's
// examples/node-manual-{nfs,nvmeof,iscsi}-pv.yaml (the nvmeof one with its
// trailing comma after the transport): write through one publish, read the
// bytes back after a restage. Nothing goes through a controller.
func nodeManualStaticPVs(ctx context.Context, t *testing.T, c *csiclient.Client, pdir, export string) {
	pvs := []struct {
		name   string
		fsType string
		attrs  map[string]string
	}{
		{"nfs-manual", "nfs", map[string]string{"server": "127.0.0.1", "share": export, "node_attach_driver": "nfs", "provisioner_driver": "node-manual"}},
		{"nvmeof-manual", "ext4", map[string]string{"transport": "tcp://127.0.0.1:4420,", "nqn": manualNQN, "nsid": "1", "node_attach_driver": "nvmeof", "provisioner_driver": "node-manual"}},
		{"iscsi-manual", "ext4", map[string]string{"portal": "127.0.0.1:3260", "iqn": manualIQN, "lun": "0", "node_attach_driver": "iscsi", "provisioner_driver": "node-manual"}},
	}
	for _, pv := range pvs {
		t.Run(pv.name, func(t *testing.T) {
			capab := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: pv.fsType}},
				AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
			staging, target := filepath.Join(pdir, pv.name+"-st"), filepath.Join(pdir, pv.name+"-tg")
			if err := os.MkdirAll(staging, 0o750); err != nil {
				t.Fatal(err)
			}
			id := "unique-volumeid-" + pv.name
			cycle := func(fn func(p string)) {
				t.Helper()
				if _, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: capab, VolumeContext: pv.attrs}); err != nil {
					t.Fatalf("NodeStageVolume: %v", err)
				}
				if _, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: capab, VolumeContext: pv.attrs}); err != nil {
					t.Fatalf("NodePublishVolume: %v", err)
				}
				fn(target)
				if _, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
					t.Fatalf("NodeUnpublishVolume: %v", err)
				}
				if _, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
					t.Fatalf("NodeUnstageVolume: %v", err)
				}
			}
			file := pv.name + ".txt"
			cycle(func(p string) {
				if err := os.WriteFile(filepath.Join(p, file), []byte(pv.name), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			cycle(func(p string) {
				if b, err := os.ReadFile(filepath.Join(p, file)); err != nil || string(b) != pv.name {
					t.Errorf("after a restage: %q %v", b, err)
				}
			})
			if pv.fsType == "nfs" {
				if b, err := os.ReadFile(filepath.Join(export, file)); err != nil || string(b) != pv.name {
					t.Errorf("on the server: %q %v", b, err)
				}
				_ = os.Remove(filepath.Join(export, file))
			}
		})
	}
}
