package proxy

import (
	"context"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/lab/zfshost"

	_ "github.com/switchyard-csi/switchyard/driver/zfsgeneric"
)

// Two real zfs-generic-nfs connections on two simulated ZFS hosts: the
// engine can send and receive, but the SSH executor cannot stream yet, so
// the proxy refuses the clone with the reason and makes nothing. When the
// executor gains RunStream this test must be turned into a copy.
func TestCloneAcrossRealZFSConnections(t *testing.T) {
	r := newRig(t)
	ha, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ha.Close() })
	hb, err := zfshost.Start(zfshost.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hb.Close() })
	r.write("nas-old", ha.DriverConfig("zfs-generic-nfs", "old", ""))
	r.write("nas-new", hb.DriverConfig("zfs-generic-nfs", "new", ""))
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "nas-old"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", resp.GetVolume().GetVolumeId()))
	wantCode(t, "clone across", err, codes.InvalidArgument, "connection nas-old (zfs-generic-nfs) cannot send a stream in this build")
	list, err := r.ctl.ListVolumes(context.Background(), &csipb.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.GetEntries()); n != 1 {
		t.Fatalf("%d volumes listed; want only the source", n)
	}
}
