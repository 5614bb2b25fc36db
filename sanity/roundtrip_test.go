package sanity

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// TestDataSurvivesRestage writes through one publish and reads the same
// bytes back after unpublish, unstage, stage and publish again: for every
// target whose node specs run on this machine (all of them in the storage
// VM), with access type mount and, where the backend serves blocks, block.
func TestDataSurvivesRestage(t *testing.T) {
	testtier.NeedRoot(t)
	base := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hosts := &simHosts{base: base}
	hosts.useKernel(t)
	t.Cleanup(hosts.close)
	ran := 0
	for i, tg := range activeTargets() {
		if tg.noNode != "" || tg.accessType == "block" { // block variants: covered by the mount target's block pass
			continue
		}
		ran++
		t.Run(tg.name, func(t *testing.T) {
			dir := filepath.Join(base, fmt.Sprint(i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mainFile, err := writeTarget(tg, dir, func(host, driver, name string) string {
				c, err := hosts.config(host, driver, name)
				if err != nil {
					t.Fatal(err)
				}
				return c
			})
			if err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "csi.sock")
			t.Cleanup(serve(t, mainFile, filepath.Join(dir, "node-state"), sock, log))
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
			kinds := []string{"mount"}
			if tg.block {
				kinds = append(kinds, "block")
			}
			for _, kind := range kinds {
				t.Run(kind, func(t *testing.T) { restage(ctx, t, c, tg, dir, kind) })
			}
		})
	}
	if ran == 0 {
		t.Skip("no target runs node calls on this machine (see each target's noNode reason)")
	}
}

func restage(ctx context.Context, t *testing.T, c *csiclient.Client, tg target, dir, kind string) {
	capab := &csipb.VolumeCapability{AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	if kind == "block" {
		capab.AccessType = &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}
	} else {
		capab.AccessType = &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}}
	}
	name := "restage-" + kind
	cr, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, Parameters: tg.params,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}, VolumeCapabilities: []*csipb.VolumeCapability{capab}})
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	vol := cr.GetVolume()
	defer func() {
		if _, err := c.Controller.DeleteVolume(context.Background(), &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId()}); err != nil {
			t.Errorf("DeleteVolume: %v", err)
		}
	}()
	nodeID := ""
	if ni, err := c.Node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{}); err == nil {
		nodeID = ni.GetNodeId()
	}
	var pubCtx map[string]string
	if tg.publish {
		pr, err := c.Controller.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: vol.GetVolumeId(), NodeId: nodeID,
			VolumeCapability: capab, VolumeContext: vol.GetVolumeContext()})
		if err != nil {
			t.Fatalf("ControllerPublishVolume: %v", err)
		}
		pubCtx = pr.GetPublishContext()
		defer func() {
			if _, err := c.Controller.ControllerUnpublishVolume(context.Background(), &csipb.ControllerUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), NodeId: nodeID}); err != nil {
				t.Errorf("ControllerUnpublishVolume: %v", err)
			}
		}()
	}
	staging := filepath.Join(dir, name+"-staging")
	target := filepath.Join(dir, name+"-target")
	if err := os.MkdirAll(staging, 0o750); err != nil {
		t.Fatal(err)
	}
	up := func() {
		t.Helper()
		if _, err := c.Node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
			VolumeCapability: capab, VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx, Secrets: tg.nodeSecrets}); err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
		if _, err := c.Node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging,
			TargetPath: target, VolumeCapability: capab, VolumeContext: vol.GetVolumeContext(), PublishContext: pubCtx}); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	// The kubelet retries a failed unpublish or unstage, and so does this
	// test, twice, saying so: in the storage VM a umount(8) has died of
	// SIGSEGV under QEMU's TCG once (CI, synology-smb, 2026-11-26) although
	// the same unmount passed in every other run. A failure that persists
	// fails the test.
	asCO := func(what string, call func() error) {
		t.Helper()
		var err error
		for try := 0; try < 3; try++ {
			if err = call(); err == nil {
				return
			}
			t.Logf("%s, try %d: %v (retried, as the kubelet would)", what, try, err)
		}
		t.Fatalf("%s: %v", what, err)
	}
	down := func() {
		t.Helper()
		asCO("NodeUnpublishVolume", func() error {
			_, err := c.Node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: vol.GetVolumeId(), TargetPath: target})
			return err
		})
		asCO("NodeUnstageVolume", func() error {
			_, err := c.Node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: vol.GetVolumeId(), StagingTargetPath: staging})
			return err
		})
	}
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	up()
	writeVolume(t, target, kind, data)
	down()
	up()
	got := readVolume(t, target, kind, len(data))
	down()
	if !bytes.Equal(got, data) {
		t.Fatalf("%s volume %s: the %d bytes read after unstage/stage differ from those written", kind, vol.GetVolumeId(), len(data))
	}
}

// writeVolume writes data to a file on a mounted volume, or to the start
// of a block device, and syncs it.
func writeVolume(t *testing.T, target, kind string, data []byte) {
	t.Helper()
	path := target
	flags := os.O_WRONLY
	if kind == "mount" {
		path = filepath.Join(target, "data.bin")
		flags |= os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readVolume(t *testing.T, target, kind string, n int) []byte {
	t.Helper()
	path := target
	if kind == "mount" {
		path = filepath.Join(target, "data.bin")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		t.Fatalf("read back %s: %v", path, err)
	}
	return buf
}
