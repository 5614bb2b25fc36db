package proxy

import (
	"bytes"
	"context"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// Two real zfs-generic connections on simulated ZFS hosts, one with a
// small pool the test fills past 95 %, and a connection whose backend has
// no health list: ControllerListVolumeHealth pages across them with proxy
// handles, carries each backend's conditions, and passes over the one
// that cannot report any.
func TestProxyListVolumeHealthAcrossConnections(t *testing.T) {
	r := newRig(t)
	small, err := zfshost.Start(zfshost.Options{Dir: t.TempDir(), PoolSize: 40 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { small.Close() })
	big := startZFSHost(t)
	r.write("nas-a", small.DriverConfig("zfs-generic-nfs", "a", ""))
	r.write("nas-b", big.DriverConfig("zfs-generic-nfs", "b", ""))
	r.write("other", "driver: "+groupFakeType+"\nfake:\n  noGroup: true\n")
	bg := context.Background()
	for conn, size := range map[string]int64{"nas-a": 39 << 20, "nas-b": 1 << 20} {
		req := setReq("pvc-"+conn, map[string]string{ConnectionParameter: conn}, nil)
		req.CapacityRange.RequiredBytes = size
		if _, err := r.ctl.CreateVolume(bg, req); err != nil {
			t.Fatalf("create on %s: %v", conn, err)
		}
	}

	// Fill the small pool past PoolFullPercent as a user would: data.
	writeVolumeData(t, small, small.Pool+"/k8s/a/pvc-nas-a", bytes.Repeat([]byte{1}, 39<<20-64<<10))
	// The model measures written data in the background; a Get measures
	// the dataset now, as the host's own accounting would have.
	if _, err := small.Model.Get(small.Pool + "/k8s/a/pvc-nas-a"); err != nil {
		t.Fatal(err)
	}

	resp, err := r.ctl.ControllerListVolumeHealth(bg, &csipb.ControllerListVolumeHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, e := range resp.GetEntries() {
		for _, s := range e.GetHealthStatuses() {
			got[e.GetVolumeId()] = append(got[e.GetVolumeId()], s.GetStatus().String()+"/"+s.GetReason())
		}
		if _, ok := got[e.GetVolumeId()]; !ok {
			got[e.GetVolumeId()] = nil
		}
	}
	if len(got) != 2 || len(got["v:nas-b/pvc-nas-b"]) != 0 {
		t.Fatalf("entries %v; want v:nas-a/pvc-nas-a and a healthy v:nas-b/pvc-nas-b", got)
	}
	if a := got["v:nas-a/pvc-nas-a"]; len(a) != 1 || a[0] != "DEGRADED/PoolFull" {
		t.Fatalf("v:nas-a/pvc-nas-a: %v; want DEGRADED/PoolFull (its pool is over 95 %% full)", a)
	}

	// One entry a page: the token carries on into the next connection.
	var ids []string
	token := ""
	for range 4 {
		pg, err := r.ctl.ControllerListVolumeHealth(bg, &csipb.ControllerListVolumeHealthRequest{MaxEntries: 1, StartingToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range pg.GetEntries() {
			ids = append(ids, e.GetVolumeId())
		}
		if token = pg.GetNextToken(); token == "" {
			break
		}
	}
	if len(ids) != 2 || ids[0] != "v:nas-a/pvc-nas-a" || ids[1] != "v:nas-b/pvc-nas-b" {
		t.Fatalf("paged ids %v; want the two volumes in connection order", ids)
	}

	_, err = r.ctl.ControllerListVolumeHealth(bg, &csipb.ControllerListVolumeHealthRequest{StartingToken: "garbage"})
	wantCode(t, "foreign token", err, codes.Aborted)
	_, err = r.ctl.ControllerListVolumeHealth(bg, &csipb.ControllerListVolumeHealthRequest{MaxEntries: -1})
	wantCode(t, "negative max_entries", err, codes.InvalidArgument)

	// A backend that cannot be reached fails the list naming its
	// connection: silence is not health.
	big.Close()
	_, err = r.ctl.ControllerListVolumeHealth(bg, &csipb.ControllerListVolumeHealthRequest{})
	if err == nil {
		t.Fatal("list with nas-b's host down succeeded")
	}
	wantCode(t, "unreachable backend", err, status.Code(err), "nas-b")
}
