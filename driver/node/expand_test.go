package node

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

func TestNodeExpandVolume(t *testing.T) {
	ctx := context.Background()
	t.Run("hostpath reports the requested size", func(t *testing.T) {
		f := newFixture(t)
		f.stage(t, mountCap(snw))
		f.publish(t, f.target, mountCap(snw), false)
		resp, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{
			VolumeId: volID, VolumePath: f.target, CapacityRange: &csi.CapacityRange{RequiredBytes: 5 << 30},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetCapacityBytes() != 5<<30 {
			t.Fatalf("capacity %d, want %d", resp.GetCapacityBytes(), int64(5<<30))
		}
	})
	t.Run("missing path", func(t *testing.T) {
		f := newFixture(t)
		f.stage(t, mountCap(snw))
		_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: "some/path"})
		wantCode(t, err, codes.NotFound)
	})
	t.Run("volume not staged here", func(t *testing.T) {
		f := newFixture(t)
		_, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: f.src})
		wantCode(t, err, codes.NotFound)
	})
	t.Run("expander attacher grows the volume", func(t *testing.T) {
		f := newFixture(t)
		grow := &growing{capacity: 7 << 30}
		f.svc = f.newService(t, func(o *Options) { o.Attachers = []Attacher{grow} })
		r := f.stageReq(mountCap(snw))
		r.VolumeContext = map[string]string{volumecontext.KeyAttachDriver: grow.Name(), volumecontext.KeyPath: f.src}
		if _, err := f.svc.NodeStageVolume(ctx, r); err != nil {
			t.Fatal(err)
		}
		resp, err := f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{
			VolumeId: volID, VolumePath: f.staging, CapacityRange: &csi.CapacityRange{RequiredBytes: 6 << 30},
			Secrets: map[string]string{"k": "v"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetCapacityBytes() != 7<<30 || grow.path != f.staging || grow.required != 6<<30 || grow.secret != "v" {
			t.Fatalf("capacity %d; expander saw path %q required %d secret %q", resp.GetCapacityBytes(), grow.path, grow.required, grow.secret)
		}
		grow.err = errors.New("resize2fs: bad superblock")
		_, err = f.svc.NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: volID, VolumePath: f.staging})
		wantCode(t, err, codes.Internal)
		if !strings.Contains(err.Error(), "bad superblock") || !strings.Contains(err.Error(), volID) {
			t.Fatalf("error %q should name the volume and the cause", err)
		}
	})
}

// growing is a hostpath-like attacher that can expand.
type growing struct {
	HostPath
	capacity, required int64
	path, secret       string
	err                error
}

func (*growing) Name() string { return "growing" }
func (g *growing) Expand(_ context.Context, _ *Host, v *Volume, p string, required int64) (int64, error) {
	g.path, g.required, g.secret = p, required, v.Secrets["k"]
	return g.capacity, g.err
}
