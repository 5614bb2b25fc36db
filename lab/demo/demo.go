// Package demo is `make demo`: it starts the switchyard binary in proxy mode
// on a scratch folder and walks one volume's life through real CSI calls,
// printing each call and its result.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/lab/mounts"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// Options configure a demo run.
type Options struct {
	Switchyard string    // path of the switchyard binary
	Out        io.Writer // the readable walkthrough
	PluginLog  io.Writer // switchyard's own log (nil: discarded)
	Keep       bool      // keep the scratch folder (for debugging)
	// Kernel, inside the storage VM, makes the simulators' shares and
	// subsystems real and adds the real-attach tour.
	Kernel *kernel.Reconciler
}

// Run performs the demo; it returns an error when any step fails, after
// cleaning up what it made.
func Run(ctx context.Context, o Options) (err error) {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the demo stages and publishes volumes with real mounts: run it as root")
	}
	if o.PluginLog == nil {
		o.PluginLog = io.Discard
	}
	dir, err := os.MkdirTemp("", "switchyard-demo-")
	if err != nil {
		return err
	}
	w := &walk{out: o.Out, dir: dir, kernel: o.Kernel != nil}
	defer func() {
		if o.Keep {
			w.say("kept %s", dir)
			return
		}
		if cerr := w.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	host, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(dir, "zfs-host"), Kernel: o.Kernel})
	if err != nil {
		return err
	}
	defer host.Close()
	w.say("simulated ZFS host: ssh %s@%s (the ZFS model behind the ZFS-over-SSH simulator, pool tank)", host.User, host.Addr)
	tn, err := truenashost.Start(truenashost.Options{Dir: filepath.Join(dir, "truenas"), Version: "25.10"})
	if err != nil {
		return err
	}
	defer tn.Close()
	w.say("simulated TrueNAS %s: %s (the middleware simulator: JSON-RPC 2.0 over a TLS WebSocket, its own certificate)", tn.Version, tn.URL())
	iopts := infiniahost.Options{Dir: filepath.Join(dir, "infinia")}
	nqnFile := filepath.Join(dir, "hostnqn")
	if o.Kernel != nil {
		iopts.Target = infiniahost.KernelTarget(o.Kernel.Incremental("demo-infinia"))
		nqnFile = "/etc/nvme/hostnqn" // nvme connect presents the node's own NQN
	}
	ih, err := infiniahost.Start(ctx, iopts)
	if err != nil {
		return err
	}
	defer ih.Close()
	w.say("simulated DDN Infinia: %s (the REST simulator under /redapi/v1, JWT login, its own certificate)", ih.URL)
	syno, err := startSynology(filepath.Join(dir, "synology"))
	if err != nil {
		return err
	}
	defer syno.Close()
	w.say("simulated Synology DSM 7: %s/webapi/entry.cgi (the Web API simulator: SYNO.API.Auth sessions, iSCSI LUNs and targets, its own certificate)", syno.URL())
	conns := zfsConnections(dir, host)
	for k, v := range truenasConnections(dir, tn) {
		conns[k] = v
	}
	for k, v := range infiniaConnections(dir, ih) {
		conns[k] = v
	}
	for k, v := range synologyConnections(dir, syno) {
		conns[k] = v
	}
	nfsConns, err := nfsClientConnections(dir)
	if err != nil {
		return err
	}
	for k, v := range nfsConns {
		conns[k] = v
	}
	mainFile, err := writeConfigs(dir, nqnFile, conns)
	if err != nil {
		return err
	}
	w.say("scratch folder %s: main config (driver: proxy) and nine connections: fast.yaml and archive.yaml (local-hostpath), zfs-nfs.yaml and zfs-nvme.yaml (zfs-generic over SSH), truenas-nfs.yaml and truenas-nvme.yaml (TrueNAS API), infinia.yaml (DDN Infinia), synology-iscsi.yaml (Synology DSM), nfs-client.yaml (an existing NFS share)", dir)
	sock := filepath.Join(dir, "csi.sock")
	start := time.Now()
	p, err := startPlugin(o.Switchyard, mainFile, sock, filepath.Join(dir, "node-state"), o.PluginLog)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = p.stop(context.Background())
		}
	}()
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		return err
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.WaitReady(wctx); err != nil {
		return err
	}
	w.say("switchyard is ready (%s after start); every line below is one CSI call over its socket", time.Since(start).Round(time.Millisecond))
	if err := w.lifecycle(ctx, c); err != nil {
		return err
	}
	if err := w.zfsTour(ctx, c, host); err != nil {
		return err
	}
	if err := w.truenasTour(ctx, c, tn); err != nil {
		return err
	}
	if err := w.infiniaTour(ctx, c, ih); err != nil {
		return err
	}
	if err := w.synologyTour(ctx, c, syno); err != nil {
		return err
	}
	if err := w.nfsClientTour(ctx, c); err != nil {
		return err
	}
	if o.Kernel != nil {
		if err := w.kernelTour(ctx, c, ih.Service); err != nil {
			return err
		}
	}
	stopped = true
	if err := w.step("SIGTERM", "stop switchyard as the kubelet would", func() (string, error) {
		return "exited cleanly after finishing in-flight calls", p.stop(ctx)
	}); err != nil {
		return err
	}
	return nil
}

// walk prints the steps and remembers what to clean up.
type walk struct {
	out    io.Writer
	dir    string
	kernel bool // in the storage VM: attaches are real
}

func (w *walk) say(format string, a ...any) { fmt.Fprintf(w.out, "   "+format+"\n", a...) }

// step runs one call and prints it with its result.
func (w *walk) step(call, args string, fn func() (string, error)) error {
	fmt.Fprintf(w.out, "→ %-26s %s\n", call, args)
	start := time.Now()
	res, err := fn()
	took := time.Since(start).Round(10 * time.Microsecond)
	if err != nil {
		if st, ok := status.FromError(err); ok {
			fmt.Fprintf(w.out, "  ✗ %s: %s (%s)\n", st.Code(), st.Message(), took)
		} else {
			fmt.Fprintf(w.out, "  ✗ %v (%s)\n", err, took)
		}
		return fmt.Errorf("%s failed: %w", call, err)
	}
	fmt.Fprintf(w.out, "  ✓ %s (%s)\n", res, took)
	return nil
}

// cleanup removes the scratch folder, refusing to when anything is still
// mounted below it (removing a mounted volume's files would destroy data).
func (w *walk) cleanup() error {
	left, err := mounts.Under(w.dir)
	if err != nil {
		return fmt.Errorf("checking for mounts under %s: %w", w.dir, err)
	}
	if len(left) > 0 {
		return fmt.Errorf("mounts left under %s: %s", w.dir, strings.Join(left, ", "))
	}
	if err := os.RemoveAll(w.dir); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "   removed %s: nothing is left behind\n", w.dir)
	return nil
}

func writeConfigs(dir, nqnFile string, extra map[string]string) (string, error) {
	conns := filepath.Join(dir, "connections")
	files := map[string]string{
		filepath.Join(dir, "main.yaml"): fmt.Sprintf(`driver: proxy
proxy:
  configFolder: %s
  nodeTopology:
    type: node   # local-hostpath keeps volumes on one node
  nodeId:
    parts:
      nodeName: true
      nqn: true   # Infinia grants the node's NVMe host NQN at ControllerPublishVolume
    nqnFile: %[2]s
service:
  controller:
    capabilities:   # the proxy's defaults plus PUBLISH_UNPUBLISH_VOLUME for Infinia
      rpc: [CREATE_DELETE_VOLUME, GET_CAPACITY, CREATE_DELETE_SNAPSHOT, CLONE_VOLUME, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER,
            LIST_VOLUMES, LIST_SNAPSHOTS, GET_SNAPSHOT, PUBLISH_UNPUBLISH_VOLUME]
`, conns, nqnFile),
		filepath.Join(dir, "hostnqn"): demoHostNQN + "\n",
		filepath.Join(conns, "fast.yaml"): fmt.Sprintf(`driver: local-hostpath
local-hostpath:
  shareBasePath: %[1]s/fast
  controllerBasePath: %[1]s/fast
`, dir),
		filepath.Join(conns, "archive.yaml"): fmt.Sprintf(`driver: local-hostpath
local-hostpath:
  shareBasePath: %[1]s/archive
  controllerBasePath: %[1]s/archive
`, dir),
	}
	for path, content := range extra {
		files[path] = content
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "main.yaml"), nil
}

var mountCap = &csipb.VolumeCapability{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

const gib = 1 << 30

// deletion is one DeleteVolume or DeleteSnapshot step of a tour.
type deletion struct{ call, id string }

// deleteAll runs the deletions in order, one step line each.
func (w *walk) deleteAll(ctx context.Context, c *csiclient.Client, dels []deletion) error {
	for _, d := range dels {
		err := w.step(d.call, d.id, func() (string, error) {
			var err error
			if d.call == "DeleteSnapshot" {
				_, err = c.Controller.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: d.id})
			} else {
				_, err = c.Controller.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: d.id})
			}
			return "deleted", err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
