package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/loadgen"
)

// trueNASProxy runs the switchyard binary (driverproc_test.go) as a proxy
// with one truenas-api-nfs connection ("nas") whose config is conn, and
// returns the driver process and a request builder.
func trueNASProxy(b *testing.B, dir, conn string) (driverProc, func(string) *csipb.CreateVolumeRequest) {
	b.Helper()
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conns, "nas.yaml"), []byte(conn), 0o600); err != nil {
		b.Fatal(err)
	}
	d := startDriver(b, dir, "driver: proxy\nproxy:\n  configFolder: "+conns+"\n")
	return d, func(name string) *csipb.CreateVolumeRequest {
		return &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: mountCap,
			CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}, Parameters: map[string]string{"connection": "nas"}}
	}
}

// maxRecords is the simulator's default Options.MaxRecords: a run that
// fills it may have lost its oldest records, so its counts are wrong.
const maxRecords = 10000

// callsSeen checks the host's counts: not more records than it keeps, and
// every call over want (auto must not have fallen back).
func callsSeen(b *testing.B, c simCounts, want string) map[string]int {
	b.Helper()
	if c.Records >= maxRecords {
		b.Fatalf("%d call records: the simulator keeps at most %d, counts would be short", c.Records, maxRecords)
	}
	if c.Transports[want] != c.Records {
		b.Fatalf("calls by transport %v; want every call over %q", c.Transports, want)
	}
	return c.Methods
}

// logCalls writes the per-method counts, sorted, for reading with -v.
func logCalls(b *testing.B, what string, by map[string]int) {
	b.Helper()
	names := make([]string, 0, len(by))
	for m := range by {
		names = append(names, m)
	}
	slices.Sort(names)
	for _, m := range names {
		b.Logf("%s: %s ×%d", what, m, by[m])
	}
}

// BenchmarkTrueNASCreateDelete: 100 CreateVolume then 100 DeleteVolume of
// truenas-api-nfs through the proxy, 16 concurrent callers, with the
// simulated TrueNAS answering every API call after 5 ms. websocket-25.10
// multiplexes everything over JSON-RPC WebSockets, ten calls per connection
// (asserted: ceil(16 / 10) = 2 dials at 16 callers); rest-24.10 is the same work over REST /api/v2.0, one HTTP request
// per call. Metrics: API calls per create and per delete (from the
// server's call records), ms per create and per delete (wall ÷ 100),
// WebSocket dials or REST HTTP requests over the run, and the CPU per
// create + delete pair of the driver (the switchyard binary as its own
// process), the simulator (a process of its own) and the client, each
// from its own process's figures. As in the ZFS
// benchmark, the bound is what the latency alone allows: calls × 5 ms ×
// 100 ÷ 16 callers (the driver's default 16 calls in flight); x-bound is
// wall time over that bound.
func BenchmarkTrueNASCreateDelete(b *testing.B) {
	volumes := 100 * benchScale(b) // SWITCHYARD_BENCH_SCALE, for profiles
	const latency = 5 * time.Millisecond
	callers := benchCallers(b, 16) // SWITCHYARD_BENCH_CALLERS
	cases := []struct {
		name, version, transport string
	}{
		{"websocket-25.10", "25.10", "websocket"},
		{"rest-24.10", "24.10", "rest"},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				h := startSim(b, simSpec{Kind: "truenas", Dir: filepath.Join(dir, "host"), Driver: "truenas-api-nfs",
					Version: tc.version, Latency: latency})
				d, req := trueNASProxy(b, dir, h.Config)
				ctl := d.c.Controller
				// Warm up: the first call connects, logs in and picks the transport.
				if _, err := ctl.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: map[string]string{"connection": "nas"}}); err != nil {
					b.Fatal(err)
				}
				before := h.counts(b)
				var cpu cpuMeter
				run := func(phase string, op func(i int) error) (time.Duration, simCounts) {
					h.reset(b)
					var wall time.Duration
					stopPerf := d.perfRecord(b, b.Name()+"-"+phase) // SWITCHYARD_PERF_DIR
					defer stopPerf()
					cpu.measure(b, d.pid, h, func() {
						var err error
						wall, err = loadgen.Spread(volumes, callers, op)
						if err != nil {
							b.Fatal(err)
						}
					})
					return wall, h.counts(b)
				}
				ids := make([]string, volumes)
				createWall, createRecs := run("create", func(i int) error {
					r, err := ctl.CreateVolume(ctx, req(fmt.Sprintf("pvc-%04d", i)))
					if err == nil {
						ids[i] = r.GetVolume().GetVolumeId()
					}
					return err
				})
				deleteWall, after := run("delete", func(i int) error {
					_, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
					return err
				})
				creates, deletes := callsSeen(b, createRecs, tc.transport), callsSeen(b, after, tc.transport)
				if i == 0 {
					logCalls(b, "create", creates)
					logCalls(b, "delete", deletes)
				}
				b.ReportMetric(float64(createRecs.Records)/float64(volumes), "calls/create")
				b.ReportMetric(float64(after.Records)/float64(volumes), "calls/delete")
				b.ReportMetric(float64(createWall.Microseconds())/1000/float64(volumes), "ms/create")
				b.ReportMetric(float64(deleteWall.Microseconds())/1000/float64(volumes), "ms/delete")
				createBound := time.Duration(createRecs.Records) * latency / time.Duration(callers)
				deleteBound := time.Duration(after.Records) * latency / time.Duration(callers)
				b.ReportMetric(float64(createWall.Milliseconds()), "create-wall-ms")
				b.ReportMetric(float64(createBound.Milliseconds()), "create-bound-ms")
				b.ReportMetric(float64(deleteWall.Milliseconds()), "delete-wall-ms")
				b.ReportMetric(float64(deleteBound.Milliseconds()), "delete-bound-ms")
				b.ReportMetric(float64(createWall+deleteWall)/float64(createBound+deleteBound), "x-bound")
				// Each side's CPU from its own process over both batches: the
				// driver (the switchyard binary), the simulator (a child
				// process, simproc_test.go) and the gRPC client (this one).
				b.ReportMetric(ms(cpu.driver)/float64(volumes), "driver-cpu-ms/pair")
				b.ReportMetric(ms(cpu.sim)/float64(volumes), "sim-cpu-ms/pair")
				b.ReportMetric(ms(cpu.client)/float64(volumes), "client-cpu-ms/pair")
				cpu.report(b, volumes)
				switch tc.transport {
				case "websocket":
					// Since the host started: the driver keeps at most ten calls
					// per WebSocket (middlewared runs ten at once per
					// connection), so min(callers, 16) in flight need at least
					// ceil(that / 10) connections, and its 16 calls in flight at
					// most ceil(16 / 10): a DeleteVolume sends its dataset and
					// snapshot queries at once, so 8 callers may have 16 calls
					// in flight.
					lo, hi := int64(min(callers, 16)+9)/10, int64(16+9)/10
					if after.WebSocketSessions < lo || after.WebSocketSessions > hi {
						b.Fatalf("%d WebSocket connections opened; want %d to %d for %d callers (counts %+v)", after.WebSocketSessions, lo, hi, callers, after)
					}
					b.ReportMetric(float64(after.WebSocketSessions), "ws-dials")
				case "rest":
					if after.WebSocketSessions != 0 {
						b.Fatalf("%d WebSocket connections on %s; want REST only", after.WebSocketSessions, tc.version)
					}
					b.ReportMetric(float64(after.RESTCalls-before.RESTCalls), "http-reqs")
					b.ReportMetric(float64(after.Connections-before.Connections), "tcp-conns")
				}
			}
		})
	}
}
