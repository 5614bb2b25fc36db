package proxy

import (
	"context"
	"fmt"
	"slices"
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
	r.write("broken", "driver: [") // skipped, not fatal
	r.write("empty", "driver: fake-test\nfake:\n  label: empty-"+t.Name()+"\n")
	slices.Sort(want)
	for _, max := range []int32{0, 1, 2, 4, 9, 100} {
		t.Run(fmt.Sprint("max=", max), func(t *testing.T) {
			var got []string
			token := ""
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatal("paging does not end")
				}
				resp, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{MaxEntries: max, StartingToken: token})
				if err != nil {
					t.Fatal(err)
				}
				if max > 0 && len(resp.GetEntries()) > int(max) {
					t.Fatalf("page of %d entries for max %d", len(resp.GetEntries()), max)
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
}
