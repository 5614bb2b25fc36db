package infinia_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
)

// TestRequestsPerCreateAndDelete counts, on the simulator, what a create
// and a delete send once the account is logged in and the service known:
// no login, the subsystem not read again when the last expose already
// answered it, one expose per instance; and the connections are kept
// alive (a fresh TCP and TLS connection per request would show here as
// one accept per request).
func TestRequestsPerCreateAndDelete(t *testing.T) {
	r := newRig(t, direct, infiniahost.Options{}, nil)
	r.create("pvc-warm")
	instances := 3 // the default_instance_ids lab/infiniahost configures
	start := r.h.Server.Stats()
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = r.create(fmt.Sprintf("pvc-%02d", i))
	}
	mid := r.h.Server.Stats()
	want := map[string]int64{
		"GET /services/{svc}": n, "GET /volumes/{v}": n, "POST /subsystems/{name}": n, "POST /volumes": n,
		"PUT /volumes/{v}/expose": n * int64(instances),
	}
	if got := diff(mid.Requests, start.Requests); !maps.Equal(got, want) {
		t.Errorf("%d creates sent %v, want %v", n, got, want)
	}
	for _, id := range ids {
		if _, err := r.ctl.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatal(err)
		}
	}
	end := r.h.Server.Stats()
	want = map[string]int64{"DELETE /volumes/{v}": n, "DELETE /subsystems/{name}": n}
	if got := diff(end.Requests, mid.Requests); !maps.Equal(got, want) {
		t.Errorf("%d deletes sent %v, want %v", n, got, want)
	}
	// The warm-up opened what a create keeps in flight at most (one per
	// instance); a later race between a connection going idle and the
	// next request may add one now and then, not one per request.
	if c := end.Connections - start.Connections; c > int64(instances) {
		t.Errorf("%d new TCP connections for %d creates and deletes (%d requests): not kept alive", c, n, end.Total()-start.Total())
	}
}

// diff is after − before, without the zero entries.
func diff(after, before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
