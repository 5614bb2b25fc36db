package infinia

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestListVolumesPagesAcrossServicesAndSubtenants(t *testing.T) {
	f := newFake(t)
	f.addService("red", "aService", 1)
	f.addService("blue", "blk", 3)
	d := newTestDriver(t, accountYAML(f.url), nil)
	ctx := context.Background()
	var want []string
	for _, p := range []struct{ svc, name string }{
		{"red/csiService", "v2"}, {"red/csiService", "v1"}, {"red/aService", "a1"}, {"blue/blk", "b1"}, {"blue/blk", "b2"},
	} {
		resp, err := d.CreateVolume(ctx, createReq(p.name, 1<<20, map[string]string{"service": p.svc}))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp.GetVolume().GetVolumeId())
	}
	// Walk order: subtenant, service, volume name.
	want = []string{want[3], want[4], want[2], want[1], want[0]}

	for _, size := range []int32{0, 1, 2, 5} {
		t.Run(fmt.Sprint("max_entries=", size), func(t *testing.T) {
			var got []string
			tok := ""
			for range 10 {
				resp, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: size, StartingToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				if size > 0 && len(resp.GetEntries()) > int(size) {
					t.Fatalf("%d entries for max_entries %d", len(resp.GetEntries()), size)
				}
				for _, e := range resp.GetEntries() {
					got = append(got, e.GetVolume().GetVolumeId())
					if e.GetVolume().GetVolumeContext()["nqn"] == "" {
						t.Errorf("%s listed without volume_context", e.GetVolume().GetVolumeId())
					}
				}
				if tok = resp.GetNextToken(); tok == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
		})
	}

	// A page continues after its last entry even when it was deleted.
	first, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: want[1]}); err != nil {
		t.Fatal(err)
	}
	rest, err := d.ListVolumes(ctx, &csi.ListVolumesRequest{StartingToken: first.GetNextToken()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.GetEntries()) != 3 || rest.GetEntries()[0].GetVolume().GetVolumeId() != want[2] {
		t.Fatalf("after deleting the page's last entry: %v", rest.GetEntries())
	}
}

func TestListVolumesBadToken(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url), nil)
	for _, tok := range []string{"junk!", encodeToken(handle{})[:3], "aGVsbG8"} {
		_, err := d.ListVolumes(context.Background(), &csi.ListVolumesRequest{StartingToken: tok})
		wantCode(t, err, codes.Aborted)
	}
	_, err := d.ListVolumes(context.Background(), &csi.ListVolumesRequest{MaxEntries: -1})
	wantCode(t, err, codes.InvalidArgument)
}

// A list is complete or an error (docs/proxy.md, "Listing"): an account
// that cannot be reached fails the call, naming it.
func TestListVolumesFailsOnAnUnreachableAccount(t *testing.T) {
	f := newFake(t)
	doc := accountYAML(f.url) + "  clu0/down/csiAccount:\n    apis: [http://127.0.0.1:1]\n    password: x\n"
	d := newTestDriver(t, doc, nil)
	if _, err := d.CreateVolume(context.Background(), createReq("pvc-1", 1<<20, map[string]string{"account": acctKey, "service": "red/csiService"})); err != nil {
		t.Fatal(err)
	}
	_, err := d.ListVolumes(context.Background(), &csi.ListVolumesRequest{})
	wantCode(t, err, codes.Unavailable)
	if !strings.Contains(err.Error(), "clu0/down/csiAccount") {
		t.Fatalf("the error does not name the account: %v", err)
	}
}

func TestGetCapacity(t *testing.T) {
	f := newFake(t)
	d := newTestDriver(t, accountYAML(f.url, "zone: zone-a"), nil)
	ctx := context.Background()
	params := map[string]string{"service": "red/csiService"}

	resp, err := d.GetCapacity(ctx, &csi.GetCapacityRequest{Parameters: params})
	if err != nil || resp.GetAvailableCapacity() != 90<<30 {
		t.Fatalf("without quotas want the cluster's free space, got %v %v", resp, err)
	}
	f.setQuota(8 << 20)
	mustCreate(t, d, "pvc-1", 3<<20)
	resp, err = d.GetCapacity(ctx, &csi.GetCapacityRequest{Parameters: params})
	if err != nil || resp.GetAvailableCapacity() != 5<<20 {
		t.Fatalf("want quota minus usage (5 MiB), got %v %v", resp, err)
	}
	f.mu.Lock()
	f.subs["red"].quota, f.subs["red"].usage = 6<<20, 4<<20
	f.mu.Unlock()
	resp, _ = d.GetCapacity(ctx, &csi.GetCapacityRequest{Parameters: params})
	if resp.GetAvailableCapacity() != 2<<20 {
		t.Fatalf("want the smaller of dataset and subtenant room (2 MiB), got %d", resp.GetAvailableCapacity())
	}
	for _, req := range []*csi.GetCapacityRequest{
		{},
		{Parameters: params, VolumeCapabilities: []*csi.VolumeCapability{mountRWX}},
		{Parameters: params, AccessibleTopology: &csi.Topology{Segments: map[string]string{zoneKey: "zone-b"}}},
	} {
		resp, err := d.GetCapacity(ctx, req)
		if err != nil || resp.GetAvailableCapacity() != 0 {
			t.Errorf("GetCapacity(%v) = %v, %v; want 0", req, resp, err)
		}
	}
	_, err = d.GetCapacity(ctx, &csi.GetCapacityRequest{Parameters: map[string]string{"service": "red/nope"}})
	wantCode(t, err, codes.InvalidArgument, "red/nope")
}
