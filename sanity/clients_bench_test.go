package sanity

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/loadgen"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/synology"
)

// Issue 14's load: 100 CreateVolume then 100 DeleteVolume through the
// proxy from 16 concurrent callers, every backend call answered after 5 ms.
const (
	benchVolumes = 100
	benchCallers = 16
	benchLatency = 5 * time.Millisecond
)

// benchBackend is one backend of BenchmarkClientsCreateDelete on its
// simulator: the connection file, how its backend calls are counted, and
// how many of them can be in flight at once (the latency-only bound is
// calls × 5 ms × 100 ÷ that).
type benchBackend struct {
	conn     string
	nodeTopo bool // node-local: the proxy needs nodeTopology.type node
	// counts are the backend calls so far, by kind ("requests",
	// "commands"), each with its concurrency; nil: none (no remote API).
	counts func() map[string]benchCount
	reset  func()
	close  func()
}

type benchCount struct {
	n        int
	inFlight int // how many the driver and the simulator run at once
}

// BenchmarkClientsCreateDelete measures the backends of issue 14 through the
// proxy. Per backend: backend calls per CreateVolume and per DeleteVolume
// (DSM Web API requests; TrueNAS API calls and SSH commands; zfs commands on
// the node), the wall time of the 100 creates and of the 100 deletes, and
// the bound the 5 ms latency alone allows: for each kind of call, calls ×
// 5 ms × 100 ÷ the calls in flight at once (16 callers for HTTP APIs, the
// 10 sessions of one SSH connection). x-bound is the wall time over it.
//
// nfs-client and smb-client call no remote API: the share is a mounted
// directory (a local one here), so a create is a mkdir, a metadata file and
// a rename. Their numbers are the proxy's and the file system's own cost.
func BenchmarkClientsCreateDelete(b *testing.B) {
	backends := []struct {
		driver string
		start  func(b *testing.B, base string) benchBackend
	}{
		{"synology-iscsi", benchSynology}, {"synology-nfs", benchSynology}, {"synology-smb", benchSynology},
		{"nfs-client", benchShareClient}, {"smb-client", benchShareClient},
		{"zfs-local-dataset", benchZFSLocal}, {"zfs-local-zvol", benchZFSLocal},
		{"freenas-nvmeof", benchFreeNASNVMeoF},
	}
	for _, be := range backends {
		b.Run(be.driver, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				base := b.TempDir()
				bb := be.start(b, filepath.Join(base, be.driver))
				runClientsBench(b, be.driver, base, bb)
				bb.close()
			}
		})
	}
}

func runClientsBench(b *testing.B, driver, base string, bb benchBackend) {
	main := "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n"
	if bb.nodeTopo {
		main += "  nodeTopology:\n    type: node\n"
	}
	tg := target{name: driver + "/bench", main: main, connections: map[string]string{"c": bb.conn}}
	c, _ := startTarget(b, &simHosts{base: base}, base, tg)
	defer c.Close()
	params := map[string]string{"connection": "c"}
	access := csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER
	capab := &csipb.VolumeCapability{AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: access}}
	if driver == "synology-iscsi" || driver == "freenas-nvmeof" {
		capab.AccessType = &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}
	}
	ctx := context.Background()
	if _, err := c.Controller.GetCapacity(ctx, &csipb.GetCapacityRequest{Parameters: params}); err != nil {
		b.Fatal(err) // warm up: connects, logs in, probes the system
	}
	counted := func() map[string]benchCount {
		if bb.counts == nil {
			return nil
		}
		return bb.counts()
	}
	run := func(op func(i int) error) (time.Duration, map[string]benchCount) {
		if bb.reset != nil {
			bb.reset()
		}
		wall, err := loadgen.Spread(benchVolumes, benchCallers, op)
		if err != nil {
			b.Fatal(err)
		}
		return wall, counted()
	}
	cpu0 := cpuTime()
	ids := make([]string, benchVolumes)
	createWall, creates := run(func(i int) error {
		r, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%03d", i), Parameters: params,
			VolumeCapabilities: []*csipb.VolumeCapability{capab}, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 30}})
		if err == nil {
			ids[i] = r.GetVolume().GetVolumeId()
		}
		return err
	})
	deleteWall, deletes := run(func(i int) error {
		_, err := c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: ids[i]})
		return err
	})
	cpu := cpuTime() - cpu0
	var bound time.Duration
	for kind, n := range creates {
		b.ReportMetric(float64(n.n)/benchVolumes, kind+"/create")
		bound += time.Duration(n.n) * benchLatency / time.Duration(n.inFlight)
	}
	for kind, n := range deletes {
		b.ReportMetric(float64(n.n)/benchVolumes, kind+"/delete")
		bound += time.Duration(n.n) * benchLatency / time.Duration(n.inFlight)
	}
	b.ReportMetric(float64(createWall.Milliseconds()), "create-wall-ms")
	b.ReportMetric(float64(deleteWall.Milliseconds()), "delete-wall-ms")
	// CPU time of the whole test process (proxy, driver and simulator all
	// run in it) over both phases: on a loaded machine, wall time well
	// above the bound with cpu-ms near it means the process waited for a
	// CPU, not for the latency.
	b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms")
	if bound > 0 {
		b.ReportMetric(float64(bound.Milliseconds()), "bound-ms")
		b.ReportMetric(float64(createWall+deleteWall)/float64(bound), "x-bound")
	}
}

// benchSynology: a DSM 7 simulator (http, as democratic-csi's example)
// answering every Web API request after 5 ms. Deleted LUNs go at once
// (DSM's background deletion would add polling that is not latency).
func benchSynology(b *testing.B, dir string) benchBackend {
	srv, err := synology.New(synology.Options{StateDir: dir, Plain: true, DeleteDelay: -1, Latency: benchLatency,
		Users:   map[string]string{synology.DefaultUser: synology.DefaultPassword, smbUser: smbPassword},
		Volumes: []synology.Volume{{Path: "/volume1", Size: 1 << 40}}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	var mark int64
	driver := filepath.Base(dir)
	return benchBackend{
		conn:  synologyConfig(driver, &lazyDSM{addr: srv.URL()[len("http://"):], n: 1}),
		reset: func() { mark = srv.Requests() },
		counts: func() map[string]benchCount {
			return map[string]benchCount{"requests": {int(srv.Requests() - mark), benchCallers}}
		},
		close: func() { srv.Close() },
	}
}

// benchShareClient: nfs-client or smb-client on a local directory standing
// in for the mounted share.
func benchShareClient(b *testing.B, dir string) benchBackend {
	driver := filepath.Base(dir)
	section := map[string]string{"nfs-client": "nfs", "smb-client": "smb"}[driver]
	conn := fmt.Sprintf("driver: %s\n%s:\n  shareHost: 192.0.2.10\n  shareBasePath: /export\n  controllerBasePath: %s\n  checkControllerMount: false\n",
		driver, section, benchMkdir(b, dir))
	return benchBackend{conn: conn, close: func() {}}
}

// benchZFSLocal: the simulated ZFS host stands in for the node's own zfs
// (reached as the node's sshd), each command answered after 5 ms, 10 SSH
// sessions at once.
func benchZFSLocal(b *testing.B, dir string) benchBackend {
	h, err := zfshost.Start(zfshost.Options{Dir: dir, Latency: benchLatency})
	if err != nil {
		b.Fatal(err)
	}
	return benchBackend{
		conn: h.DriverConfig(filepath.Base(dir), "bench", ""), nodeTopo: true,
		reset:  h.Server.ResetCommands,
		counts: func() map[string]benchCount { return map[string]benchCount{"commands": {len(h.Server.Commands()), 10}} },
		close:  func() { h.Close() },
	}
}

// benchFreeNASNVMeoF: a simulated TrueNAS 25.10 whose middleware answers
// every API call and whose SSH endpoint every command after 5 ms: zvols by
// zfs over SSH (10 sessions), subsystems and namespaces through the nvmet
// API (16 calls in flight).
func benchFreeNASNVMeoF(b *testing.B, dir string) benchBackend {
	h, err := truenashost.Start(truenashost.Options{Dir: dir, Version: "25.10", SSH: true, Latency: benchLatency})
	if err != nil {
		b.Fatal(err)
	}
	h.Server.SSHFaults().SetLatency("", benchLatency)
	var sshMark int64
	return benchBackend{
		conn: h.DriverConfig("freenas-nvmeof", "bench", ""),
		reset: func() {
			h.Server.ResetCalls()
			sshMark = h.Server.SSHFaults().Counts().Delayed
		},
		counts: func() map[string]benchCount {
			return map[string]benchCount{
				"api-calls":    {len(h.Server.Calls()), benchCallers},
				"ssh-commands": {int(h.Server.SSHFaults().Counts().Delayed - sshMark), 10},
			}
		},
		close: func() { h.Close() },
	}
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchMkdir(b *testing.B, dir string) string {
	p := filepath.Join(dir, "share")
	if err := os.MkdirAll(p, 0o755); err != nil {
		b.Fatal(err)
	}
	return p
}
