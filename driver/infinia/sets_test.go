package infinia_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/infiniahost"
)

// Two Infinia systems as a connection set (docs/proxy.md, connection
// sets): a retried CreateVolume finds the volume on the member that made
// it, even when the policy would now pick the other one, and concurrent
// creates of one name make one volume. Infinia's volume ids are not the
// name (they carry account, subtenant and service), so the proxy asks the
// driver's FindVolume instead of deriving an id.
func TestSetOfInfiniaSystemsIsIdempotent(t *testing.T) {
	a, b := startHost(t, infiniahost.Options{}), startHost(t, infiniahost.Options{})
	dir, err := os.MkdirTemp("", "sy-infset")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := serveFiles(t, dir, map[string]string{
		"inf-a": driverConfig(a, proxied, nil),
		"inf-b": driverConfig(b, proxied, nil),
	})
	ctx := context.Background()
	req := func(name string) *csi.CreateVolumeRequest {
		return &csi.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csi.VolumeCapability{blockCap},
			CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 30},
			Parameters:    map[string]string{"service": a.Service, "connections": "inf-a,inf-b"}}
	}
	first, err := c.Controller.CreateVolume(ctx, req("pvc-1"))
	if err != nil {
		t.Fatalf("create on the set: %v", err)
	}
	// The member that got pvc-1 now has less room; the policy (most free
	// space) would choose the other. The retry must still find pvc-1.
	for i := 0; i < 3; i++ {
		again, err := c.Controller.CreateVolume(ctx, req("pvc-1"))
		if err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		if again.GetVolume().GetVolumeId() != first.GetVolume().GetVolumeId() {
			t.Fatalf("retry %d made %s; the first call made %s", i, again.GetVolume().GetVolumeId(), first.GetVolume().GetVolumeId())
		}
	}
	// 16 concurrent creates of a new name: one volume.
	var wg sync.WaitGroup
	ids := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Controller.CreateVolume(ctx, req("pvc-2"))
			if err != nil {
				t.Errorf("concurrent create: %v", err)
				return
			}
			ids <- v.GetVolume().GetVolumeId()
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != 1 {
		t.Fatalf("concurrent creates made %d volumes: %v", len(seen), seen)
	}
	// Every volume is listed once, on its member: exactly two.
	list, err := c.Controller.ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.GetEntries()); n != 2 {
		t.Fatalf("ListVolumes has %d volumes; want 2: %v", n, list.GetEntries())
	}
	// A member whose request parameters it refuses (an unknown service)
	// holds nothing: the create fails with that member's own error, not
	// "cannot tell".
	bad := req("pvc-3")
	bad.Parameters["service"] = "red/noSuchService"
	_, err = c.Controller.CreateVolume(ctx, bad)
	if s, _ := status.FromError(err); s.Code() == codes.Unavailable || s.Code() == codes.OK {
		t.Fatalf("create with an unknown service: %v; want the member's refusal", err)
	}
}

// serveFiles serves a proxy controller over the connection files given.
func serveFiles(t *testing.T, dir string, files map[string]string) *csiclient.Client {
	t.Helper()
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range files {
		if err := os.WriteFile(filepath.Join(conns, name+".yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// serve writes a main file as it is given outside the proxy mode.
	c, err := serve(t, direct, "driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeId:\n    parts:\n      nqn: true\n"+proxyCaps)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
