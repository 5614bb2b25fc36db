package node

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func zfsCtx(name string) map[string]string {
	return map[string]string{volumecontext.KeyAttachDriver: "zfs-local", volumecontext.KeyZFSAssetName: name, "provisioner_driver": "zfs-local-dataset"}
}

func zfsGet(typ, mountpoint, mounted string) string {
	return "type\t" + typ + "\nmountpoint\t" + mountpoint + "\nmounted\t" + mounted + "\n"
}

func TestZFSLocal(t *testing.T) {
	const name = "tank/k8s/pvc-1"
	tests := []struct {
		name     string
		get      func(f *attachFixture) (string, error)
		c        *csi.VolumeCapability
		wantCode codes.Code
		check    func(t *testing.T, f *attachFixture)
	}{
		{
			name: "zvol: formatted and mounted",
			get: func(f *attachFixture) (string, error) {
				f.tree.device("dev/zd0", 1<<30)
				f.tree.link("dev/zvol/"+name, "../../../zd0")
				return zfsGet("volume", "-", "-"), nil
			},
			c: mountCap(snw),
			check: func(t *testing.T, f *attachFixture) {
				if mp, ok := f.mountAt(f.staging); !ok || mp.Device != f.tree.path("dev/zd0") || mp.Type != "ext4" {
					t.Fatalf("staging mount %+v (%t)", mp, ok)
				}
			},
		},
		{
			name: "dataset not mounted: zfs mount, then bind",
			get: func(f *attachFixture) (string, error) {
				f.sim.reply("zfs mount", "", nil)
				return zfsGet("filesystem", f.src, "no"), nil
			},
			c: mountCap(snw),
			check: func(t *testing.T, f *attachFixture) {
				if got := f.sim.lines("zfs mount"); !slices.Equal(got, []string{"zfs mount " + name}) {
					t.Fatalf("ran %q", got)
				}
				if mp, ok := f.mountAt(f.staging); !ok || mp.Device != f.src || !slices.Contains(mp.Opts, "bind") {
					t.Fatalf("staging mount %+v (%t), want a bind of %s", mp, ok, f.src)
				}
			},
		},
		{
			name: "legacy dataset: mount -t zfs",
			get:  func(*attachFixture) (string, error) { return zfsGet("filesystem", "legacy", "no"), nil },
			c:    fsCap(snw, "ext4"), // a StorageClass default fs type does not apply to a dataset
			check: func(t *testing.T, f *attachFixture) {
				if mp, ok := f.mountAt(f.staging); !ok || mp.Device != name || mp.Type != "zfs" {
					t.Fatalf("staging mount %+v (%t)", mp, ok)
				}
			},
		},
		{
			name:     "dataset with mountpoint=none",
			get:      func(*attachFixture) (string, error) { return zfsGet("filesystem", "none", "no"), nil },
			c:        mountCap(snw),
			wantCode: codes.FailedPrecondition,
		},
		{
			name:     "dataset as a block volume",
			get:      func(f *attachFixture) (string, error) { return zfsGet("filesystem", f.src, "yes"), nil },
			c:        blockCap(snw),
			wantCode: codes.InvalidArgument,
		},
		{
			name: "missing",
			get: func(*attachFixture) (string, error) {
				return "cannot open '" + name + "': dataset does not exist\n", exit(1)
			},
			c:        mountCap(snw),
			wantCode: codes.NotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAttachFixture(t)
			f.sim.on("zfs get", func(argv []string) (string, error) {
				if strings.Join(argv, " ") != "zfs get -H -o property,value type,mountpoint,mounted "+name {
					t.Errorf("ran %q", argv)
				}
				return tt.get(f)
			})
			_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(zfsCtx(name), tt.c))
			wantCode(t, err, tt.wantCode)
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func TestZFSLocalValidation(t *testing.T) {
	for _, name := range []string{"", "/tank/x", "tank/x@snap", "tank/../x"} {
		f := newAttachFixture(t)
		_, err := f.svc.NodeStageVolume(context.Background(), f.stageCtx(zfsCtx(name), mountCap(snw)))
		wantCode(t, err, codes.InvalidArgument)
		if !strings.Contains(err.Error(), volumecontext.KeyZFSAssetName) {
			t.Errorf("%q: error %q does not name the key", name, err)
		}
	}
}

func TestZFSLocalExpandZvol(t *testing.T) {
	f := newAttachFixture(t)
	f.tree.device("dev/zd16", 1<<30)
	f.tree.link("dev/zvol/tank/v", "../../zd16")
	f.sim.reply("zfs get", zfsGet("volume", "-", "-"), nil)
	f.mustStage(t, f.stageCtx(zfsCtx("tank/v"), mountCap(snw)))
	if err := os.Truncate(f.tree.path("dev/zd16"), 2<<30); err != nil {
		t.Fatal(err)
	}
	resp, err := f.expand(f.staging, 2<<30)
	if err != nil || resp.GetCapacityBytes() != 2<<30 {
		t.Fatalf("expand: %v, %v", resp, err)
	}
	if got := f.sim.lines("resize2fs"); !slices.Equal(got, []string{"resize2fs " + f.tree.path("dev/zd16")}) {
		t.Fatalf("resize: %q", got)
	}
}
