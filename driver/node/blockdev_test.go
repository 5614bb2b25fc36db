package node

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	mount "k8s.io/mount-utils"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func fsCap(mode csi.VolumeCapability_AccessMode_Mode, fs string) *csi.VolumeCapability {
	c := mountCap(mode)
	c.GetMount().FsType = fs
	return c
}

// Formatting, refusing, growing and mounting a block device, through the
// iscsi attacher (the device is dev/sdb).
func TestBlockDeviceFormatAndMount(t *testing.T) {
	tests := []struct {
		name     string
		existing string // filesystem on the device before staging
		c        *csi.VolumeCapability
		vc       []string
		wantCode codes.Code
		wantType string   // mounted as
		wantCmds []string // command prefixes that must run, in order
		noCmds   []string // command prefixes that must not run
		wantOpts []string
		mention  []string
	}{
		{
			name: "blank device: default ext4", c: mountCap(snw),
			wantType: "ext4", wantCmds: []string{"blkid", "mkfs.ext4 -F -m0"}, noCmds: []string{"resize2fs", "fsck"},
			wantOpts: []string{"defaults"},
		},
		{
			name: "blank device: xfs as asked, mounted nouuid", c: fsCap(snw, "xfs"),
			wantType: "xfs", wantCmds: []string{"mkfs.xfs -f"}, wantOpts: []string{"nouuid", "defaults"},
		},
		{
			name: "existing filesystem: kept, checked and grown", existing: "ext4", c: fsCap(snw, "ext4"),
			wantType: "ext4", wantCmds: []string{"blkid", "fsck -a", "blockdev --getro", "resize2fs"}, noCmds: []string{"mkfs"},
		},
		{
			name: "existing filesystem and no fs_type: mounted as it is", existing: "xfs", c: mountCap(snw),
			wantType: "xfs", wantCmds: []string{"xfs_growfs -d"}, noCmds: []string{"mkfs"}, wantOpts: []string{"nouuid", "defaults"},
		},
		{
			name: "different filesystem: refused, never reformatted", existing: "xfs", c: fsCap(snw, "ext4"),
			wantCode: codes.FailedPrecondition, noCmds: []string{"mkfs", "fsck"}, mention: []string{"xfs", "ext4", "not reformatted"},
		},
		{
			name: "partition table: refused", existing: "", c: mountCap(snw),
			wantCode: codes.FailedPrecondition, noCmds: []string{"mkfs"}, mention: []string{"partition table"},
		},
		{
			name: "reader-only mode: mounted ro, not grown", existing: "ext4", c: mountCap(mnro),
			wantType: "ext4", noCmds: []string{"resize2fs", "mkfs", "fsck"}, wantOpts: []string{"ro", "defaults"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			iscsiTargetSim(f)
			dev := f.tree.path("dev/sdb")
			if tt.existing != "" {
				f.disk[dev] = tt.existing
			}
			if strings.HasPrefix(tt.name, "partition table") {
				f.sim.reply("blkid", "PTTYPE=gpt\n", nil)
			}
			_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(tt.vc...), tt.c))
			wantCode(t, err, tt.wantCode)
			for _, m := range tt.mention {
				if !strings.Contains(status.Convert(err).Message(), m) {
					t.Errorf("message %q lacks %q", status.Convert(err).Message(), m)
				}
			}
			i := 0
			for _, line := range f.sim.ran {
				if i < len(tt.wantCmds) && strings.HasPrefix(line, tt.wantCmds[i]) {
					i++
				}
				for _, no := range tt.noCmds {
					if strings.HasPrefix(line, no) {
						t.Errorf("%q ran", line)
					}
				}
			}
			if i < len(tt.wantCmds) {
				t.Errorf("commands %q lack %q (in order)", f.sim.ran, tt.wantCmds[i:])
			}
			mp, ok := f.mountAt(f.staging)
			if tt.wantCode != codes.OK {
				if ok {
					t.Fatalf("staging mounted after a refusal: %+v", mp)
				}
				if tt.existing != "" && f.disk[dev] != tt.existing {
					t.Fatalf("device now has %q", f.disk[dev])
				}
				return
			}
			if !ok || mp.Device != dev || mp.Type != tt.wantType {
				t.Fatalf("staging mount %+v (%t), want %s as %s", mp, ok, dev, tt.wantType)
			}
			if tt.wantOpts != nil && !slices.Equal(mp.Opts, tt.wantOpts) {
				t.Fatalf("mount options %q, want %q", mp.Opts, tt.wantOpts)
			}
		})
	}
}

// A failed resize unmounts again, so that a retry grows the filesystem
// instead of finding the volume staged.
func TestBlockDeviceGrowFailureUnmounts(t *testing.T) {
	f := newAttachFixture(t)
	iscsiTargetSim(f)
	f.disk[f.tree.path("dev/sdb")] = "ext4"
	f.sim.reply("resize2fs", "resize2fs: Permission denied to resize filesystem", exit(1))
	_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(), mountCap(snw)))
	wantCode(t, err, codes.Internal)
	if !strings.Contains(err.Error(), "Permission denied to resize") {
		t.Fatalf("error %q lacks resize2fs' output", err)
	}
	if _, ok := f.mountAt(f.staging); ok {
		t.Fatal("left mounted")
	}
}

// After the first format the filesystem root gets volume_context
// owneruid, groupuid and perms (Infinia); an existing filesystem keeps its own.
func TestBlockDeviceOwnership(t *testing.T) {
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	for _, existing := range []string{"", "ext4"} {
		t.Run("existing="+existing, func(t *testing.T) {
			f := newAttachFixture(t)
			iscsiTargetSim(f)
			if existing != "" {
				f.disk[f.tree.path("dev/sdb")] = existing
			}
			if err := os.MkdirAll(f.staging, 0o755); err != nil {
				t.Fatal(err)
			}
			f.mustStage(t, f.stageCtx(iscsiCtx(volumecontext.KeyOwnerUID, uid, volumecontext.KeyGroupUID, gid, volumecontext.KeyPerms, "0710"), mountCap(snw)))
			fi, err := os.Stat(f.staging)
			if err != nil {
				t.Fatal(err)
			}
			want := os.FileMode(0o710)
			if existing != "" {
				want = 0o755
			}
			if fi.Mode().Perm() != want {
				t.Fatalf("root mode %v, want %v", fi.Mode().Perm(), want)
			}
		})
	}
}

func TestBlockDeviceStagingBusy(t *testing.T) {
	for _, block := range []bool{false, true} {
		t.Run(accessType(block), func(t *testing.T) {
			f := newAttachFixture(t)
			iscsiTargetSim(f)
			c, at := mountCap(snw), f.staging
			if block {
				c, at = blockCap(snw), f.staging+"/"+StagedBlockDevice
			}
			if err := os.MkdirAll(f.staging, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.staging+"/"+StagedBlockDevice, nil, 0o640); err != nil {
				t.Fatal(err)
			}
			f.mounter.MountPoints = append(f.mounter.MountPoints, mount.MountPoint{Device: "/dev/sdz", Path: at})
			_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(iscsiCtx(), c))
			wantCode(t, err, codes.AlreadyExists)
		})
	}
}

func TestMountFlags(t *testing.T) {
	tests := []struct {
		name          string
		flags         []string
		secret        string
		wantPlain     []string
		wantSensitive []string
	}{
		{"none", nil, "", []string{"defaults"}, nil},
		{"capability flags deduplicated, defaults once", []string{"noatime", "defaults", "noatime"}, "", []string{"noatime", "defaults"}, nil},
		{"secret csv apart, minus what the capability has", []string{"vers=4.1"}, " vers=4.1 ,hard,,hard", []string{"vers=4.1", "defaults"}, []string{"hard"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mountCap(snw)
			c.GetMount().MountFlags = tt.flags
			plain, sensitive := mountFlags(&Volume{Capability: c, Secrets: map[string]string{SecretMountFlags: tt.secret}})
			if !slices.Equal(plain, tt.wantPlain) || !slices.Equal(sensitive, tt.wantSensitive) {
				t.Fatalf("mountFlags = %q, %q; want %q, %q", plain, sensitive, tt.wantPlain, tt.wantSensitive)
			}
		})
	}
}
