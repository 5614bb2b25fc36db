package proxy

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func cloneReq(name, conn, srcHandle string) *csipb.CreateVolumeRequest {
	src := &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: srcHandle}}}
	if srcHandle[0] == 's' {
		src = &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: srcHandle}}}
	}
	params := map[string]string{ConnectionParameter: conn}
	if conn[0] == '[' {
		params = map[string]string{ConnectionsParameter: conn[1 : len(conn)-1]}
	}
	return &csipb.CreateVolumeRequest{Name: name, Parameters: params, VolumeCapabilities: mountCap,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}, VolumeContentSource: src}
}

// A volume and a snapshot of one connection become volumes of another by
// streaming; the handle names the target, the content source stays what
// the CO sent.
func TestCloneAcrossConnections(t *testing.T) {
	r := newRig(t)
	r.fake("old", "  stream: zfs-filesystem")
	lnew := r.fake("new", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	for _, src := range []string{"v:old/pvc-1", "s:old/pvc-1@snap-1"} {
		name := "pvc-from-" + src[:1]
		resp, err := r.ctl.CreateVolume(context.Background(), cloneReq(name, "new", src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		v := resp.GetVolume()
		if v.GetVolumeId() != "v:new/"+name {
			t.Fatalf("%s: handle %s; want v:new/%s", src, v.GetVolumeId(), name)
		}
		gotSrc := v.GetContentSource().GetVolume().GetVolumeId() + v.GetContentSource().GetSnapshot().GetSnapshotId()
		if gotSrc != src {
			t.Fatalf("content source %q; want %q", gotSrc, src)
		}
		id := src[len("v:old/"):]
		data := receivedBy(lnew, name)
		if int64(len(data)) != 1<<20 || !bytes.HasPrefix(data, []byte(id+";"+id+";")) {
			t.Fatalf("%s: target received %d bytes starting %.20q; want the source's stream", src, len(data), data)
		}
		if _, ok := fakeVolumes(lnew)[name]; !ok {
			t.Fatalf("%s: no volume on the target", src)
		}
	}
}

// A copy that outlasts the call answers ABORTED with its progress; the
// retry gets the volume, and only one copy ran.
func TestCloneAcrossConnectionsInProgress(t *testing.T) {
	r := newRig(t)
	r.fake("old", "  stream: zfs-volume", "  gate: "+t.Name())
	lnew := r.fake("new", "  stream: zfs-volume", `  capacity: "1073741824"`)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.ctl.CreateVolume(ctx, cloneReq("pvc-slow", "new", "v:old/pvc-1"))
	wantCode(t, "first call", err, codes.Aborted, "in progress", "%", "old", "new")
	openGate(t.Name())
	resp, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-slow", "new", "v:old/pvc-1"))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:new/pvc-slow" {
		t.Fatalf("retry: %v %v", resp, err)
	}
	if n := fakeVolumes(lnew)["pvc-slow"]; n != 1 {
		t.Fatalf("target made %d times", n)
	}
}

func TestCloneAcrossConnectionsRefusals(t *testing.T) {
	r := newRig(t)
	r.fake("fs", "  stream: zfs-filesystem")
	lvol := r.fake("vol", "  stream: zfs-volume")
	r.write("api", "driver: fake-api-nfs-test\nfake:\n  label: "+t.Name()+"-api\n")
	r.write("blk", "driver: fake-iscsi-test\nfake:\n  label: "+t.Name()+"-blk\n")
	r.write("blk2", "driver: fake-iscsi-test\nfake:\n  label: "+t.Name()+"-blk2\n")
	lfull := r.fake("full", "  stream: zfs-filesystem", `  capacity: "1000"`)
	cases := []struct {
		name, conn, src string
		code            codes.Code
		words           []string
	}{
		{"TrueNAS API", "api", "v:fs/pvc-1", codes.FailedPrecondition, []string{"TrueNAS API", "Replication", "SSH"}},
		{"filesystem into zvol", "vol", "v:fs/pvc-1", codes.InvalidArgument, []string{"zfs-filesystem vs zfs-volume"}},
		{"block into file", "fs", "v:blk/pvc-1", codes.InvalidArgument, []string{"block volume cannot become a file volume"}},
		{"block between block backends", "blk2", "v:blk/pvc-1", codes.InvalidArgument, []string{"block volumes move", "ZFS streams"}},
		{"target full", "full", "v:fs/pvc-1", codes.ResourceExhausted, []string{"full has 1000 bytes free"}},
		{"unknown source connection", "fs", "v:gone/pvc-1", codes.FailedPrecondition, []string{"gone.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-r", c.conn, c.src))
			wantCode(t, c.name, err, c.code, c.words...)
		})
	}
	for _, l := range []string{lvol, lfull} {
		if _, ok := fakeVolumes(l)["pvc-r"]; ok {
			t.Fatalf("a volume was made on %s", l)
		}
	}
}

// A set whose members do not hold the source copies it onto the member
// the policy picks; a member holding the source clones there.
func TestSetCloneAcross(t *testing.T) {
	r := newRig(t)
	r.fake("src", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	r.fake("m1", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	r.fake("m2", "  stream: zfs-filesystem", `  capacity: "2147483648"`)
	resp, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-sx", "[m1,m2]", "v:src/pvc-1"))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:m2/pvc-sx" {
		t.Fatalf("%v %v; want v:m2/pvc-sx", resp.GetVolume().GetVolumeId(), err)
	}
	resp, err = r.ctl.CreateVolume(context.Background(), cloneReq("pvc-sy", "[m2,src]", "v:src/pvc-1"))
	if err != nil || resp.GetVolume().GetVolumeId() != "v:src/pvc-sy" {
		t.Fatalf("%v %v; want v:src/pvc-sy (the source's own connection)", resp.GetVolume().GetVolumeId(), err)
	}
}

// A backend that implements streaming but whose host cannot stream
// (format "") is refused like one that cannot stream at all.
func TestCloneAcrossConnectionsNoStreamHost(t *testing.T) {
	r := newRig(t)
	r.fake("a", "  stream: zfs-filesystem")
	r.fake("b", "  stream: none")
	_, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-n", "b", "v:a/pvc-1"))
	wantCode(t, "no-stream target", err, codes.InvalidArgument, "connection b (fake-test) cannot receive a stream in this build", "Limits of this build")
}

// copyRecorder is an Observer that also watches copies.
type copyRecorder struct {
	mu       sync.Mutex
	bytes    map[string]int64
	finished []string
}

func (*copyRecorder) ConnectionLoaded(string, string, error) {}
func (*copyRecorder) ConnectionRemoved(string)               {}
func (c *copyRecorder) CopyProgress(target string, delta int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes[target] += delta
}
func (c *copyRecorder) CopyFinished(target string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = append(c.finished, fmt.Sprintf("%s:%v", target, status.Code(err)))
}

func TestCloneAcrossConnectionsObserved(t *testing.T) {
	r := newRig(t)
	rec := &copyRecorder{bytes: map[string]int64{}}
	r.conns.SetObserver(rec)
	r.fake("a", "  stream: zfs-filesystem")
	r.fake("b", "  stream: zfs-filesystem", `  capacity: "1073741824"`)
	if _, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-o", "b", "v:a/pvc-1")); err != nil {
		t.Fatal(err)
	}
	if rec.bytes["b"] != 1<<20 || len(rec.finished) != 1 || rec.finished[0] != "b:OK" {
		t.Fatalf("observed %v bytes, finished %v; want 1 MiB into b, one OK", rec.bytes, rec.finished)
	}
}
