package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// fakeSyscalls replaces the health checks' kernel calls for one test.
func fakeSyscalls(t *testing.T, statfs func(string) error, size func(string) (int64, error)) {
	t.Helper()
	old := healthSys
	t.Cleanup(func() { healthSys = old })
	if statfs != nil {
		healthSys.statfs = statfs
	}
	if size != nil {
		healthSys.deviceSize = size
	}
}

func (f *fixture) health(t *testing.T, publish string) []*csi.VolumeHealth_VolumeHealthEntry {
	t.Helper()
	resp, err := f.svc.NodeGetVolumeHealth(context.Background(), &csi.NodeGetVolumeHealthRequest{VolumeId: volID, VolumePublishPath: publish})
	if err != nil {
		t.Fatalf("NodeGetVolumeHealth: %v", err)
	}
	if got := resp.GetVolumeHealth().GetVolumeId(); got != volID {
		t.Fatalf("volume_id %q, want %q", got, volID)
	}
	return resp.GetVolumeHealth().GetHealthStatuses()
}

// wantHealth checks the entries are exactly the given status/reason pairs
// and that every message names the path it is about.
func wantHealth(t *testing.T, got []*csi.VolumeHealth_VolumeHealthEntry, path string, want ...string) {
	t.Helper()
	var keys []string
	for _, e := range got {
		keys = append(keys, e.GetStatus().String()+"/"+e.GetReason())
		if path != "" && !strings.Contains(e.GetMessage(), path) {
			t.Errorf("message %q does not name %s", e.GetMessage(), path)
		}
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("health %v (%v), want %v", keys, got, want)
	}
}

func TestNodeHealthyVolumeHasNoConditions(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), false)
	wantHealth(t, f.health(t, f.target), "")
}

func TestNodeHealthStaleMount(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ESTALE, syscall.ENOTCONN} {
		t.Run(fmt.Sprint(int(errno)), func(t *testing.T) {
			f := newFixture(t)
			f.stage(t, mountCap(snw))
			f.publish(t, f.target, mountCap(snw), false)
			fakeSyscalls(t, func(p string) error {
				if p == f.target {
					return &os.PathError{Op: "statfs", Path: p, Err: errno}
				}
				return nil
			}, nil)
			got := f.health(t, f.target)
			wantHealth(t, got, f.target, "INACCESSIBLE/StaleMount")
			name := map[syscall.Errno]string{syscall.ESTALE: "ESTALE", syscall.ENOTCONN: "ENOTCONN"}[errno]
			if !strings.Contains(got[0].GetMessage(), name) {
				t.Fatalf("message %q does not name %s", got[0].GetMessage(), name)
			}
		})
	}
}

func TestNodeHealthUnmountedBehindTheDriversBack(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), false)
	if err := f.mounter.Unmount(f.target); err != nil {
		t.Fatal(err)
	}
	wantHealth(t, f.health(t, f.target), f.target, "INACCESSIBLE/NotMounted")
}

// setOpts changes the options of the fake mount at path, as a remount does.
func (f *fixture) setOpts(t *testing.T, path string, opts ...string) {
	t.Helper()
	f.mounter.MountCheckErrors = nil
	for i := range f.mounter.MountPoints {
		if f.mounter.MountPoints[i].Path == path {
			f.mounter.MountPoints[i].Opts = opts
			return
		}
	}
	t.Fatalf("no fake mount at %s", path)
}

func TestNodeHealthReadOnlyRemount(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), false)
	f.setOpts(t, f.staging, "ro")
	f.setOpts(t, f.target, "bind", "ro")
	got := f.health(t, f.target)
	wantHealth(t, got, "", "DEGRADED/ReadOnlyRemount")
	// One entry for both paths (the spec forbids repeating a status and
	// reason), naming each.
	for _, p := range []string{f.staging, f.target} {
		if !strings.Contains(got[0].GetMessage(), p) {
			t.Fatalf("message %q does not name %s", got[0].GetMessage(), p)
		}
	}
}

func TestNodeHealthReadOnlyPublishIsNotAFault(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snw))
	f.publish(t, f.target, mountCap(snw), true) // readonly=true: ro is what was asked
	f.setOpts(t, f.target, "bind", "ro")
	wantHealth(t, f.health(t, f.target), "")
}

func TestNodeHealthReaderOnlyModeIsNotAFault(t *testing.T) {
	f := newFixture(t)
	f.stage(t, mountCap(snro))
	f.publish(t, f.target, mountCap(snro), false)
	f.setOpts(t, f.staging, "ro")
	f.setOpts(t, f.target, "bind", "ro")
	wantHealth(t, f.health(t, f.target), "")
}

func TestNodeHealthBlockDeviceMissing(t *testing.T) {
	for name, size := range map[string]func(string) (int64, error){
		"removed":  func(p string) (int64, error) { return 0, &os.PathError{Op: "open", Path: p, Err: syscall.ENXIO} },
		"detached": func(string) (int64, error) { return 0, nil },
	} {
		t.Run(name, func(t *testing.T) {
			f := newBlockFixture(t)
			fakeSyscalls(t, nil, size)
			got := f.health(t, f.target)
			wantHealth(t, got, "", "INACCESSIBLE/DeviceMissing")
			if !strings.Contains(got[0].GetMessage(), f.target) || !strings.Contains(got[0].GetMessage(), StagedBlockDevice) {
				t.Fatalf("message %q does not name the staged device and the publish path", got[0].GetMessage())
			}
		})
	}
}

func TestNodeHealthBlockDevicePresent(t *testing.T) {
	f := newBlockFixture(t)
	fakeSyscalls(t, nil, func(string) (int64, error) { return 1 << 20, nil })
	wantHealth(t, f.health(t, f.target), "")
}

func TestNodeHealthUnknownVolume(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.NodeGetVolumeHealth(context.Background(), &csi.NodeGetVolumeHealthRequest{VolumeId: volID})
	wantCode(t, err, codes.NotFound)
	_, err = f.svc.NodeGetVolumeHealth(context.Background(), &csi.NodeGetVolumeHealthRequest{})
	wantCode(t, err, codes.InvalidArgument)
}

// A path kubelet names without a node record (a lost state directory) is
// still checked, as far as the kernel tells.
func TestNodeHealthWithoutRecordChecksThePath(t *testing.T) {
	f := newFixture(t)
	missing := f.root + "/gone"
	fakeSyscalls(t, func(p string) error { return &os.PathError{Op: "statfs", Path: p, Err: syscall.ENOENT} }, nil)
	resp, err := f.svc.NodeGetVolumeHealth(context.Background(), &csi.NodeGetVolumeHealthRequest{VolumeId: volID, VolumePublishPath: missing})
	if err != nil {
		t.Fatal(err)
	}
	wantHealth(t, resp.GetVolumeHealth().GetHealthStatuses(), missing, "INACCESSIBLE/NotMounted")
}

// newBlockFixture stages and publishes a raw block volume through the
// fake block attacher.
func newBlockFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.svc = f.newService(t, withBlockAttacher(f))
	vc := map[string]string{volumecontext.KeyAttachDriver: "fakeblock"}
	ctx := context.Background()
	if _, err := f.svc.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.staging, VolumeCapability: blockCap(snw), VolumeContext: vc,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: f.staging, TargetPath: f.target, VolumeCapability: blockCap(snw), VolumeContext: vc,
	}); err != nil {
		t.Fatal(err)
	}
	return f
}
