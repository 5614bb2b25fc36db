package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func (f *attachFixture) expand(path string, required int64) (*csi.NodeExpandVolumeResponse, error) {
	return f.svc.NodeExpandVolume(context.Background(), &csi.NodeExpandVolumeRequest{
		VolumeId: volID, VolumePath: path, CapacityRange: &csi.CapacityRange{RequiredBytes: required},
	})
}

func (f *attachFixture) grow(t *testing.T, rel string, size int64) {
	t.Helper()
	if err := os.Truncate(f.tree.path(rel), size); err != nil {
		t.Fatal(err)
	}
}

func TestExpandISCSI(t *testing.T) {
	t.Run("mount: rescan the disk, grow the filesystem", func(t *testing.T) {
		f := newAttachFixture(t)
		iscsiTargetSim(f)
		f.mustStage(t, f.stageCtx(iscsiCtx(), mountCap(snw)))
		f.grow(t, "dev/sdb", 2<<30) // the target grew the LUN
		f.sim.reset()
		resp, err := f.expand(f.staging, 2<<30)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetCapacityBytes() != 2<<30 {
			t.Fatalf("capacity %d", resp.GetCapacityBytes())
		}
		if b, _ := os.ReadFile(f.tree.path("sys/block/sdb/device/rescan")); string(b) != "1" {
			t.Fatalf("rescan file holds %q, want 1", b)
		}
		if got := f.sim.lines("resize2fs"); !slices.Equal(got, []string{"resize2fs " + f.tree.path("dev/sdb")}) {
			t.Fatalf("resize: %q (ran %q)", got, f.sim.ran)
		}
	})
	t.Run("multipath: every path rescanned, the map resized", func(t *testing.T) {
		f := newAttachFixture(t)
		k := iscsiTargetSim(f)
		k.dmMultipath = true
		f.mustStage(t, f.stageCtx(iscsiCtx(volumecontext.KeyPortals, "10.0.0.7"), blockCap(snw)))
		f.sim.reply("multipathd resize map", "ok", nil)
		f.grow(t, "dev/dm-0", 3<<30)
		resp, err := f.expand(filepath.Join(f.staging, StagedBlockDevice), 3<<30)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetCapacityBytes() != 3<<30 {
			t.Fatalf("capacity %d", resp.GetCapacityBytes())
		}
		for _, sd := range []string{"sdb", "sdc"} {
			if b, _ := os.ReadFile(f.tree.path("sys/block/" + sd + "/device/rescan")); string(b) != "1" {
				t.Errorf("%s not rescanned", sd)
			}
		}
		if got := f.sim.lines("multipathd"); !slices.Equal(got, []string{"multipathd resize map mpathb"}) {
			t.Fatalf("multipath resize: %q", got)
		}
		if len(f.sim.lines("resize2fs")) != 0 {
			t.Fatal("a block volume's content was resized")
		}
	})
	t.Run("the device never reaches the size", func(t *testing.T) {
		f := newAttachFixture(t)
		iscsiTargetSim(f)
		f.mustStage(t, f.stageCtx(iscsiCtx(), mountCap(snw)))
		_, err := f.expand(f.staging, 5<<30)
		wantCode(t, err, codes.Internal)
		if !strings.Contains(err.Error(), "grow to 5368709120 bytes") {
			t.Fatalf("error %q", err)
		}
	})
	t.Run("device gone", func(t *testing.T) {
		f := newAttachFixture(t)
		iscsiTargetSim(f)
		f.mustStage(t, f.stageCtx(iscsiCtx(), mountCap(snw)))
		f.tree.remove("dev/disk")
		_, err := f.expand(f.staging, 1<<30)
		wantCode(t, err, codes.NotFound)
	})
}

func TestExpandNVMeoF(t *testing.T) {
	f := newAttachFixture(t)
	nvmeTarget(f, true)
	f.mustStage(t, f.stageCtx(nvmeCtx(volumecontext.KeyTransports, "tcp://10.0.0.7:4420"), blockCap(snw)))
	f.grow(t, "dev/nvme0n1", 4<<30)
	f.sim.reset()
	resp, err := f.expand(filepath.Join(f.staging, StagedBlockDevice), 4<<30)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetCapacityBytes() != 4<<30 {
		t.Fatalf("capacity %d", resp.GetCapacityBytes())
	}
	want := []string{"nvme ns-rescan " + f.tree.path("dev/nvme0"), "nvme ns-rescan " + f.tree.path("dev/nvme1")}
	if got := f.sim.lines("nvme"); !slices.Equal(got, want) {
		t.Fatalf("ran %q, want %q", got, want)
	}
}
