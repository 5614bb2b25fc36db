package benchtable

import (
	"fmt"
	"path/filepath"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/simproc"
)

// backend is one table: how to start its storage (simulated, or none) and
// what a CreateVolume asks of it.
type backend struct {
	name string
	// what the table's heading says the storage is
	about string
	// sim is the simulated host (nil: the driver's own file system).
	sim func(dir string, latency time.Duration) *simproc.Spec
	// slots is how many calls the driver keeps in flight to the host by
	// default (the bound's concurrency): ZFS over SSH, the SSH server's
	// 10 sessions; the API backends, 16 calls or connections.
	slots int
	// main is the driver's config; hello is the simulator's (zero for none).
	main func(dir string, hello simproc.Hello) string
	cap  *csipb.VolumeCapability
}

var mountCap = &csipb.VolumeCapability{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

var blockCap = &csipb.VolumeCapability{
	AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

func hello(h simproc.Hello) string { return h.Config }

// Backends are the tables switchyard-lab bench can print, in its order.
var Backends = []string{"local-hostpath", "zfs-generic-nfs", "freenas-api-nfs-websocket", "freenas-api-nfs-rest", "infinia-nvmeof"}

func lookup(name string) (backend, error) {
	switch name {
	case "local-hostpath":
		return backend{name: name, about: "the driver's own directory (no storage host, no latency)", cap: mountCap,
			main: func(dir string, _ simproc.Hello) string {
				hp := filepath.Join(dir, "hp")
				return fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %s\n  controllerBasePath: %s\n", hp, hp)
			}}, nil
	case "zfs-generic-nfs":
		return backend{name: name, slots: 10, cap: mountCap, main: func(_ string, h simproc.Hello) string { return hello(h) },
			about: "the simulated ZFS host over SSH (simulators/zfsssh), the latency charged once per round trip (an SSH exec or a shell-session program)",
			sim: func(dir string, l time.Duration) *simproc.Spec {
				return &simproc.Spec{Kind: "zfs", Dir: dir, Driver: "zfs-generic-nfs", RTTLatency: l}
			}}, nil
	case "freenas-api-nfs-websocket", "freenas-api-nfs-rest":
		version, about := "25.10", "the simulated TrueNAS 25.10 (simulators/truenas), JSON-RPC over WebSockets (ten calls at most on each, as middlewared runs them), the latency charged per API call; round trips are the calls the simulator answered, and a delete sends two of its five together, so its bound (calls × latency) is loose by one"
		if name == "freenas-api-nfs-rest" {
			version, about = "24.10", "the simulated TrueNAS 24.10, REST /api/v2.0, the latency charged per API call; round trips are the calls, as for the WebSocket"
		}
		return backend{name: name, slots: 16, cap: mountCap, about: about, main: func(_ string, h simproc.Hello) string { return hello(h) },
			sim: func(dir string, l time.Duration) *simproc.Spec {
				return &simproc.Spec{Kind: "truenas", Dir: dir, Driver: "freenas-api-nfs", Version: version, Latency: l}
			}}, nil
	case "infinia-nvmeof":
		return backend{name: name, slots: 16, cap: blockCap, main: func(_ string, h simproc.Hello) string { return hello(h) },
			about: "the simulated DDN Infinia (simulators/infinia), REST over TLS, the latency charged per request; round trips are the requests the simulator routed; a create sends its seven in four steps (the service and volume reads together, the exposes together), so its bound (requests × latency) is loose by three",
			sim: func(dir string, l time.Duration) *simproc.Spec {
				return &simproc.Spec{Kind: "infinia", Dir: dir, Latency: l}
			}}, nil
	}
	return backend{}, fmt.Errorf("unknown backend %q; the benchmark knows %v", name, Backends)
}
