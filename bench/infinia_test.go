package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
)

// infiniaNodeID is a node id carrying the node's NVMe host NQN
// (proxy.nodeId.parts.nqn), as ControllerPublishVolume needs.
const infiniaNodeID = "n=bench-node/v=nqn.2014-08.org.nvmexpress:uuid:5a4e17e5-0000-4000-8000-00000000b001"

// infiniaPoolSize is the driver's default maxConnsPerHost: the most
// connections one account may open to one endpoint.
const infiniaPoolSize = 16

var blockCap = []*csipb.VolumeCapability{{
	AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}}

// infiniaProxy serves a proxy with one infinia-nvmeof connection
// ("infinia") to h: node ids carry the NQN and the controller grants it
// at ControllerPublishVolume.
func infiniaProxy(b *testing.B, dir string, h *infiniahost.Host) csipb.ControllerClient {
	b.Helper()
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conns, "infinia.yaml"), h.DriverConfig("infinia", nil), 0o600); err != nil {
		b.Fatal(err)
	}
	c := start(b, dir, "driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeId:\n    parts:\n      nqn: true\n"+
		"service:\n  controller:\n    capabilities:\n      rpc: [CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, GET_CAPACITY, EXPAND_VOLUME, LIST_VOLUMES, GET_VOLUME]\n")
	return c.Controller
}

// BenchmarkInfiniaLifecycle: 100 volume lifecycles (CreateVolume,
// ControllerPublishVolume, ControllerUnpublishVolume, DeleteVolume)
// through the proxy over gRPC, 16 concurrent callers, against the
// simulated Infinia over TLS answering every REST request after 5 ms.
//
// Metrics: ns/lifecycle (wall ÷ 100), REST requests per lifecycle (from
// the server's counters), and the logins, TCP connections and TLS
// handshakes the server accepted during the run. The run fails when it
// logged in more than once (a login per call would show here: the token
// lives an hour) or opened more connections or handshakes than the
// account's pool allows (16): one pool and one token per account.
//
// The bound is what the latency alone allows: requests × 5 ms ÷ 16
// callers; x-bound is wall time over that bound.
func BenchmarkInfiniaLifecycle(b *testing.B) {
	const (
		volumes = 100
		callers = 16
		latency = 5 * time.Millisecond
	)
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		h, err := infiniahost.Start(context.Background(), infiniahost.Options{Dir: simStateDir(b), Latency: latency})
		if err != nil {
			b.Fatal(err)
		}
		ctl := infiniaProxy(b, dir, h)
		params := map[string]string{"connection": "infinia", "service": h.Service}
		// Warm up: the first call builds the connection's driver, connects
		// and logs in.
		if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: params}); err != nil {
			b.Fatal(err)
		}
		before := h.Server.Stats()

		work := make(chan int, volumes)
		for v := range volumes {
			work <- v
		}
		close(work)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		t0 := time.Now()
		for range callers {
			wg.Go(func() {
				for v := range work {
					if err := infiniaLifecycle(ctl, fmt.Sprintf("pvc-%03d", v), params); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		wall := time.Since(t0)
		if first != nil {
			b.Fatal(first)
		}
		after := h.Server.Stats()
		requests := after.Total() - before.Total()
		logins := after.Logins - before.Logins
		conns, handshakes := after.Connections, after.TLSHandshakes // since the host started: the warm-up's count too
		if i == 0 {
			logRequests(b, before.Requests, after.Requests)
		}
		bound := time.Duration(requests) * latency / callers
		b.ReportMetric(float64(wall.Nanoseconds())/volumes, "ns/lifecycle")
		b.ReportMetric(float64(requests)/volumes, "reqs/lifecycle")
		b.ReportMetric(float64(logins), "logins")
		b.ReportMetric(float64(conns), "tcp-conns")
		b.ReportMetric(float64(handshakes), "tls-handshakes")
		b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
		b.ReportMetric(float64(bound.Milliseconds()), "bound-ms")
		b.ReportMetric(float64(wall)/float64(bound), "x-bound")
		if logins > 1 {
			b.Errorf("%d logins during %d lifecycles; want at most 1 (one token per account, not a login per call)", logins, volumes)
		}
		if conns > infiniaPoolSize || handshakes > infiniaPoolSize {
			b.Errorf("%d TCP connections and %d TLS handshakes; the account's pool allows %d", conns, handshakes, infiniaPoolSize)
		}
		if n := after.Statuses[401] + after.Statuses[503]; n != 0 {
			b.Errorf("%d answers 401/503 during the run", n)
		}
		h.Close()
	}
}

// simStateDir is where the simulator keeps its state: on tmpfs when the
// machine has one. The simulator journals every change under its lock
// (no fsync: its state must survive the process, not the machine); on
// tmpfs the file system's own cost stays out of the run too.
func simStateDir(b *testing.B) string {
	if d, err := os.MkdirTemp("/dev/shm", "sy-bench-infinia-"); err == nil {
		b.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	b.Log("no /dev/shm: the simulator's state is on disk, its fsyncs count in the wall time")
	return b.TempDir()
}

// infiniaLifecycle runs one volume's lifecycle.
func infiniaLifecycle(ctl csipb.ControllerClient, name string, params map[string]string) error {
	v, err := ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: blockCap,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}, Parameters: params})
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	id := v.GetVolume().GetVolumeId()
	if _, err := ctl.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: infiniaNodeID, VolumeCapability: blockCap[0]}); err != nil {
		return fmt.Errorf("publish %s: %w", name, err)
	}
	if _, err := ctl.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: infiniaNodeID}); err != nil {
		return fmt.Errorf("unpublish %s: %w", name, err)
	}
	if _, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: id}); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// logRequests writes the run's requests by route, for reading with -v.
func logRequests(b *testing.B, before, after map[string]int64) {
	b.Helper()
	routes := make([]string, 0, len(after))
	for r := range after {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	for _, r := range routes {
		if n := after[r] - before[r]; n > 0 {
			b.Logf("%s ×%d", r, n)
		}
	}
}
