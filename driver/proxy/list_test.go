package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestListVolumesAcrossConnections(t *testing.T) {
	r := newRig(t)
	var want []string
	for _, c := range []string{"b", "a", "c"} {
		r.fake(c)
		for i := 0; i < 3; i++ {
			if _, err := r.create(c, fmt.Sprintf("pvc-%d", i)); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("v:%s/pvc-%d", c, i))
		}
	}
	r.write("empty", "driver: fake-test\nfake:\n  label: empty-"+t.Name()+"\n")
	slices.Sort(want)
	for _, maxEntries := range []int32{0, 1, 2, 4, 9, 100} {
		t.Run(fmt.Sprint("max=", maxEntries), func(t *testing.T) {
			var got []string
			token := ""
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatal("paging does not end")
				}
				resp, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{MaxEntries: maxEntries, StartingToken: token})
				if err != nil {
					t.Fatal(err)
				}
				if maxEntries > 0 && len(resp.GetEntries()) > int(maxEntries) {
					t.Fatalf("page of %d entries for max %d", len(resp.GetEntries()), maxEntries)
				}
				for _, e := range resp.GetEntries() {
					got = append(got, e.GetVolume().GetVolumeId())
				}
				if token = resp.GetNextToken(); token == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("listed %v; want %v", got, want)
			}
		})
	}
	for _, bad := range []string{"garbage", encodeToken("zzz", ""), encodeToken("a", "999")} {
		_, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{StartingToken: bad})
		wantCode(t, "token "+bad, err, codes.Aborted)
	}
	// A list is complete or an error: a broken file fails it, naming the
	// file, as an unreachable backend does; nothing is listed in part.
	r.write("broken", "driver: [")
	_, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{})
	wantCode(t, "a broken connection file", err, codes.FailedPrecondition, "ListVolumes", "broken.yaml")
	_, err = r.ctl.ListSnapshots(context.Background(), &csipb.ListSnapshotsRequest{})
	wantCode(t, "a broken connection file", err, codes.FailedPrecondition, "ListSnapshots", "broken.yaml")
}

// An object whose decorated handle would exceed 128 bytes (made before the
// proxy, with a long id) is left out of listings rather than sent broken.
func TestListLeavesOutOversizedHandles(t *testing.T) {
	r := newRig(t)
	label := r.fake("conn")
	r.validate("v:conn/none") // builds the driver, and with it the fake's store
	fakes.Lock()
	fakes.vols[label]["short"] = 1
	fakes.vols[label][strings.Repeat("x", 130)] = 1
	fakes.Unlock()
	resp, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{})
	if err != nil || len(resp.GetEntries()) != 1 || resp.GetEntries()[0].GetVolume().GetVolumeId() != "v:conn/short" {
		t.Fatalf("ListVolumes = %v, %v; want only v:conn/short", resp, err)
	}
}
