// Package startupbench measures the switchyard binary as a process: how soon it
// answers its first Probe, and its resident memory when idle with many
// connection files (switchyard-lab bench).
package startupbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
	"github.com/switchyard-csi/switchyard/lab/procstat"
)

// Result is one measurement.
type Result struct {
	Connections int
	FirstProbe  time.Duration // process start → first successful Probe
	RSSIdle     int64         // bytes, idle after start
	RSSWarm     int64         // bytes, idle after every connection was used once
	Volumes     int           // volumes listed across all connections (proves they were used)
}

// Run starts bin with a proxy config over n local-hostpath connections.
func Run(ctx context.Context, bin string, n int) (Result, error) {
	res := Result{Connections: n}
	dir, err := os.MkdirTemp("", "switchyard-bench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		return res, err
	}
	for i := range n {
		base := filepath.Join(dir, "data", fmt.Sprint(i))
		cfg := fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s\n  controllerBasePath: %[1]s\n", base)
		if err := os.WriteFile(filepath.Join(conns, fmt.Sprintf("conn-%03d.yaml", i)), []byte(cfg), 0o600); err != nil {
			return res, err
		}
	}
	mainFile := filepath.Join(dir, "main.yaml")
	main := fmt.Sprintf("driver: proxy\nproxy:\n  configFolder: %s\n  nodeTopology:\n    type: node\n", conns)
	if err := os.WriteFile(mainFile, []byte(main), 0o600); err != nil {
		return res, err
	}
	sock := filepath.Join(dir, "csi.sock")
	cmd := exec.Command(bin, "--driver-config-file="+mainFile, "--csi-name=org.switchyard.bench",
		"--csi-mode=controller", "--csi-mode=node", "--server-socket="+sock, "--node-state-dir="+filepath.Join(dir, "state"), "--log-level=warn")
	cmd.Env = append(os.Environ(), "CSI_NODE_ID=bench-node")
	cmd.Stderr = os.Stderr
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		return res, err
	}
	defer c.Close()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.WaitReady(wctx); err != nil {
		return res, err
	}
	res.FirstProbe = time.Since(start)

	time.Sleep(time.Second) // let start-up garbage be collected
	if res.RSSIdle, err = procstat.RSS(cmd.Process.Pid); err != nil {
		return res, err
	}
	// Use every connection once: one volume each, then list them all.
	for i := range n {
		_, err := c.Controller.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: fmt.Sprintf("pvc-%d", i),
			Parameters:         map[string]string{"connection": fmt.Sprintf("conn-%03d", i)},
			VolumeCapabilities: []*csipb.VolumeCapability{mountCap}})
		if err != nil {
			return res, fmt.Errorf("create on conn-%03d: %w", i, err)
		}
	}
	list, err := c.Controller.ListVolumes(ctx, &csipb.ListVolumesRequest{})
	if err != nil {
		return res, err
	}
	res.Volumes = len(list.GetEntries())
	time.Sleep(time.Second)
	res.RSSWarm, err = procstat.RSS(cmd.Process.Pid)
	return res, err
}

var mountCap = &csipb.VolumeCapability{
	AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}
