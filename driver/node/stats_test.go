package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

func TestNodeGetVolumeStats(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.src, "data"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := f.svc.NodeGetVolumeStats(context.Background(), &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: f.src})
	if err != nil {
		t.Fatal(err)
	}
	checkUsage(t, resp)
}

// checkUsage asserts a filesystem's stats are plausible: both units,
// positive totals, used and available within the total.
func checkUsage(t *testing.T, resp *csi.NodeGetVolumeStatsResponse) {
	t.Helper()
	units := map[csi.VolumeUsage_Unit]*csi.VolumeUsage{}
	for _, u := range resp.GetUsage() {
		units[u.GetUnit()] = u
	}
	for _, unit := range []csi.VolumeUsage_Unit{csi.VolumeUsage_BYTES, csi.VolumeUsage_INODES} {
		u := units[unit]
		if u == nil {
			t.Fatalf("no %v usage in %v", unit, resp)
		}
		if u.Total <= 0 || u.Used <= 0 || u.Available <= 0 || u.Used+u.Available > u.Total {
			t.Fatalf("implausible %v usage: %v", unit, u)
		}
	}
}

func TestNodeGetVolumeStatsMissingPath(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"some/path", filepath.Join(f.root, "nope")} {
		_, err := f.svc.NodeGetVolumeStats(context.Background(), &csi.NodeGetVolumeStatsRequest{VolumeId: volID, VolumePath: p})
		wantCode(t, err, codes.NotFound)
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not name %s", err, p)
		}
	}
}
