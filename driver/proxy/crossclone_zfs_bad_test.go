package proxy

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// Bad input for copies between real zfs-generic connections on two
// simulated hosts (the list): each ends with the error that says
// what happened, and nothing is made or lost.

// model runs zfs on a host's model directly (the host's own admin, not
// the driver), failing the test on a non-zero exit.
func model(t *testing.T, h *zfshost.Host, stdin []byte, args ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	var errb strings.Builder
	var in *bytes.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	var code int
	if in != nil {
		code = h.Model.ZFS(args, in, &out, &errb)
	} else {
		code = h.Model.ZFS(args, nil, &out, &errb)
	}
	if code != 0 {
		t.Fatalf("zfs %v: %s", args, errb.String())
	}
	return out.Bytes()
}

// twoHosts is an old and a new zfs-generic-nfs connection, and a source
// volume pvc-src on the old one holding payload.
func twoHosts(t *testing.T, payload []byte) (*rig, *zfshost.Host, *zfshost.Host, string) {
	t.Helper()
	r := newRig(t)
	ha, hb := startZFSHost(t), startZFSHost(t)
	r.write("nas-old", ha.DriverConfig("zfs-generic-nfs", "old", ""))
	r.write("nas-new", hb.DriverConfig("zfs-generic-nfs", "new", ""))
	resp, err := r.ctl.CreateVolume(context.Background(), setReq("pvc-src", map[string]string{ConnectionParameter: "nas-old"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	writeVolumeData(t, ha, ha.Pool+"/k8s/old/pvc-src", payload)
	return r, ha, hb, resp.GetVolume().GetVolumeId()
}

// nothingOnNew fails if the new connection's parent holds anything.
func nothingOnNew(t *testing.T, hb *zfshost.Host) {
	t.Helper()
	var out, errb strings.Builder
	hb.Model.ZFS([]string{"list", "-H", "-o", "name", "-t", "all", "-r", hb.Pool + "/k8s/new"}, nil, &out, &errb)
	for _, l := range strings.Fields(out.String()) {
		if l != hb.Pool+"/k8s/new" {
			t.Errorf("left on the new host: %s", l)
		}
	}
}

// noXferSnapshot fails if the copy's temporary snapshot is left on the old host.
func noXferSnapshot(t *testing.T, ha *zfshost.Host) {
	t.Helper()
	for _, s := range modelList(t, ha, ha.Pool+"/k8s/old/pvc-src", "snapshot") {
		if strings.Contains(s, "@xfer-") {
			t.Errorf("the copy's temporary snapshot is left: %s", s)
		}
	}
}

// The target pool fills during the copy (the capacity check before it
// passed: 1 MiB asked, 1.5 MB free under the new connection's parent, but
// 2 MB arrive, as when other writers fill the pool meanwhile): zfs
// receive fails with out of space, the copy ends RESOURCE_EXHAUSTED
// without retrying, and the partial target is removed.
func TestCloneAcrossTargetFillsMidCopy(t *testing.T) {
	payload := bytes.Repeat([]byte("more than the new pool holds\n"), 70000) // ~2 MB
	r, ha, hb, src := twoHosts(t, payload)
	model(t, hb, nil, "create", "-p", "-o", "quota=1500000", hb.Pool+"/k8s/new")
	_, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", src))
	wantCode(t, "target fills", err, codes.ResourceExhausted, "out of space", "nas-new")
	if ranOK(hb, "receive") {
		t.Error("a zfs receive succeeded")
	}
	nothingOnNew(t, hb)
	noXferSnapshot(t, ha)
	if got := readVolumeData(t, ha, ha.Pool+"/k8s/old/pvc-src", len(payload)); !bytes.Equal(got, payload) {
		t.Fatal("the source changed")
	}
}

// partialCopy leaves what a controller killed mid-copy leaves: the
// temporary snapshot on the old host and a partial, resumable receive
// (receive_resume_token) on the new one.
func partialCopy(t *testing.T, ha, hb *zfshost.Host) {
	t.Helper()
	snap := ha.Pool + "/k8s/old/pvc-src@xfer-pvc-moved"
	model(t, ha, nil, "snapshot", snap)
	stream := model(t, ha, nil, "send", snap)
	model(t, hb, nil, "create", "-p", hb.Pool+"/k8s/new")
	var errb strings.Builder
	if code := hb.Model.ZFS([]string{"receive", "-s", dstDSName(hb)}, bytes.NewReader(stream[:len(stream)/2]), nil, &errb); code == 0 {
		t.Fatal("a half stream was received whole")
	}
	if tok := modelGet(t, hb, dstDSName(hb), "receive_resume_token"); tok == "-" || tok == "" {
		t.Fatalf("no resume token after a half stream: %q", tok)
	}
}

// A controller restarted mid-copy: the retry in the new process (a new
// proxy) resumes from the new host's token with zfs send -t, and the copy
// is whole and finished as a fresh volume.
func TestCloneAcrossResumesAfterControllerRestart(t *testing.T) {
	payload := bytes.Repeat([]byte("copied by two processes\n"), 25000)
	r, ha, hb, src := twoHosts(t, payload)
	partialCopy(t, ha, hb)
	moved, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", src))
	if err != nil {
		t.Fatal(err)
	}
	if !ranOK(ha, "send", "-t") {
		t.Fatal("the retry did not resume with zfs send -t")
	}
	if got := readVolumeData(t, hb, dstDSName(hb), len(payload)); !bytes.Equal(got, payload) {
		t.Fatalf("the resumed copy holds %d bytes starting %.30q", len(got), got)
	}
	if got := modelGet(t, hb, dstDSName(hb), "democratic-csi:provision_success"); got != "true" || moved.GetVolume().GetVolumeId() != "v:nas-new/pvc-moved" {
		t.Fatalf("provision_success %q, handle %s", got, moved.GetVolume().GetVolumeId())
	}
	noXferSnapshot(t, ha)
}

// The source volume is deleted mid-copy (after part of it arrived): the
// resume finds nothing to send, the copy ends NOT_FOUND naming the source,
// and the partial target is removed.
func TestCloneAcrossSourceDeletedMidCopy(t *testing.T) {
	payload := bytes.Repeat([]byte("deleted while copied\n"), 25000)
	r, ha, hb, src := twoHosts(t, payload)
	partialCopy(t, ha, hb)
	model(t, ha, nil, "destroy", "-r", ha.Pool+"/k8s/old/pvc-src")
	_, err := r.ctl.CreateVolume(context.Background(), cloneReq("pvc-moved", "nas-new", src))
	wantCode(t, "source deleted", err, codes.NotFound, "pvc-src")
	nothingOnNew(t, hb)
}
