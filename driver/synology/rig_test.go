package synology_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/synology"
	sim "github.com/switchyard-csi/switchyard/simulators/synology"
)

// rig is a simulated DSM and a driver configured for it.
type rig struct {
	t   testing.TB
	srv *sim.Server
	d   *synology.Driver
	ctx context.Context
}

// configFor is a driver config for the simulator at url; extra is YAML
// appended (keys of the flavour's section).
func configFor(driver, url, extra string) string {
	proto, addr, _ := strings.Cut(url, "://")
	host, port, _ := strings.Cut(addr, ":")
	cfg := fmt.Sprintf(`driver: %s
httpConnection:
  protocol: `+proto+`
  host: %s
  port: %s
  username: %s
  password: %s
  allowInsecure: true
`, driver, host, port, sim.DefaultUser, sim.DefaultPassword)
	switch driver {
	case synology.DriverISCSI:
		cfg += "iscsi:\n  targetPortal: 127.0.0.1\n  baseiqn: iqn.2000-01.com.synology:csi.\n  lunTemplate:\n    type: BLUN\n"
	case synology.DriverNFS:
		cfg += "nfs:\n  shareHost: 127.0.0.1\n"
	case synology.DriverSMB:
		cfg += "smb:\n  shareHost: 127.0.0.1\n  shareUsers: [admin]\n"
	}
	return cfg + extra
}

func newRig(t testing.TB, driver, extra string, o sim.Options) *rig {
	t.Helper()
	o.StateDir = t.TempDir()
	if o.DeleteDelay == 0 {
		o.DeleteDelay = 20 * time.Millisecond
	}
	srv, err := sim.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r := &rig{t: t, srv: srv, ctx: context.Background()}
	r.d = r.driver(configFor(driver, srv.URL(), extra))
	return r
}

func (r *rig) driver(cfg string) *synology.Driver {
	r.t.Helper()
	tree, err := config.Parse([]byte(cfg))
	if err != nil {
		r.t.Fatal(err)
	}
	if ps := synology.Validate(tree); len(ps) > 0 {
		r.t.Fatalf("config problems: %v", ps)
	}
	d, err := synology.New(backend.Options{Config: tree})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { d.Close() })
	return d
}

func mountCap() []*csi.VolumeCapability {
	return []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
}

func (r *rig) create(name string, size int64, src *csi.VolumeContentSource) (*csi.Volume, error) {
	resp, err := r.d.CreateVolume(r.ctx, &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap(),
		CapacityRange: &csi.CapacityRange{RequiredBytes: size}, VolumeContentSource: src})
	return resp.GetVolume(), err
}

func (r *rig) mustCreate(name string, size int64, src *csi.VolumeContentSource) *csi.Volume {
	r.t.Helper()
	v, err := r.create(name, size, src)
	if err != nil {
		r.t.Fatalf("create %s: %v", name, err)
	}
	return v
}

func (r *rig) snapshot(vol, name string) *csi.Snapshot {
	r.t.Helper()
	resp, err := r.d.CreateSnapshot(r.ctx, &csi.CreateSnapshotRequest{SourceVolumeId: vol, Name: name})
	if err != nil {
		r.t.Fatalf("snapshot %s: %v", name, err)
	}
	return resp.GetSnapshot()
}

func (r *rig) capacity() int64 {
	r.t.Helper()
	c, err := r.d.GetCapacity(r.ctx, &csi.GetCapacityRequest{})
	if err != nil {
		r.t.Fatal(err)
	}
	return c.GetAvailableCapacity()
}

func (r *rig) volumeIDs() []string {
	r.t.Helper()
	l, err := r.d.ListVolumes(r.ctx, &csi.ListVolumesRequest{})
	if err != nil {
		r.t.Fatal(err)
	}
	var ids []string
	for _, e := range l.GetEntries() {
		ids = append(ids, e.GetVolume().GetVolumeId())
	}
	return ids
}

// wantCode fails unless err is a status with code whose message holds
// every part.
func wantCode(t *testing.T, err error, code codes.Code, parts ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want %v", err, code)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("%v: does not say %q", err, p)
		}
	}
}
