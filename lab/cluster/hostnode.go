package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// Host network devices of the host node: a veth pair carrying the node IP
// and the kubernetes service IP (the kernel has no dummy devices), and the
// CNI bridge of the pods.
const (
	nodeVeth     = "sylnode0"
	nodeVethPeer = "sylnode1"
	cniBridge    = "sylcni0"
	// PodCIDR is the host node's pod network (host-local IPAM).
	PodCIDR = "10.244.0.0/24"
)

// containerdConfig renders the host node's containerd configuration: its
// own root, state and socket under dir (never /run/containerd: Docker's
// containerd may use it), the lab's pause image as the sandbox image, and
// restrict_oom_score_adj because the lab hosts lack CAP_SYS_RESOURCE
// (without it every sandbox fails: "can't get final child's PID from pipe").
func containerdConfig(dir, sandboxImage string) string {
	cd := func(p string) string { return filepath.Join(dir, "containerd", p) }
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri.aufs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
`, cd("root"), cd("state"), cd("containerd.sock"), cd("containerd-ttrpc.sock"), cd("opt"), sandboxImage, filepath.Join(dir, "cni", "net.d"))
}

// cniConfig is a bridge network with host-local addresses kept under dir
// (the default /var/lib/cni/networks is shared by everyone on the host).
func cniConfig(dir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "switchyard-lab",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %q
      }
    }
  ]
}
`, cniBridge, PodCIDR, filepath.Join(dir, "cni", "networks"))
}

// ContainerdSocket is the host node's containerd socket.
func (c *Local) ContainerdSocket() string { return c.path("containerd", "containerd.sock") }

// startHostNode starts the host's node: network devices, containerd with
// the pause image (and Options.Images), the service IP forwarder, kubelet.
func (c *Local) startHostNode(ctx context.Context) error {
	if err := c.recordHostPaths(); err != nil {
		return err
	}
	if err := c.step("node network", c.setupNodeNetwork); err != nil {
		return err
	}
	for _, d := range []string{"containerd", "cni/net.d", "cni/networks", "pod-logs"} {
		if err := os.MkdirAll(c.path(d), 0o755); err != nil {
			return err
		}
	}
	var pauseTar, pauseRef string
	if err := c.step("pause image", func() error {
		var err error
		pauseTar, pauseRef, err = c.pauseImage(ctx)
		return err
	}); err != nil {
		return err
	}
	if err := os.WriteFile(c.path("containerd", "config.toml"), []byte(containerdConfig(c.dir, pauseRef)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(c.path("cni", "net.d", "10-switchyard-lab.conflist"), []byte(cniConfig(c.dir)), 0o644); err != nil {
		return err
	}
	containerd, err := vm.LookTool("containerd")
	if err != nil {
		return fmt.Errorf("%w (package containerd; scripts/ensure-cluster-deps.sh installs it)", err)
	}
	if err := c.step("containerd started", func() error {
		if err := c.Spawn("containerd", []string{containerd, "--config", c.path("containerd", "config.toml")}, nil); err != nil {
			return err
		}
		return c.waitContainerd(ctx, 30*time.Second)
	}); err != nil {
		return err
	}
	if err := c.step("images imported", func() error { return c.importNodeImages(ctx, pauseTar) }); err != nil {
		return err
	}
	if err := c.startServiceForwarder(); err != nil {
		return err
	}
	nodeDir := c.path("node", HostNodeName)
	err = c.WriteNodeFiles(nodeDir, HostNodeName, HostNodeIP.String(), c.APIServerURL(), KubeletOptions{
		ContainerRuntimeEndpoint: "unix://" + c.ContainerdSocket(),
		Port:                     HostKubeletPort,
		HealthzPort:              HostKubeletHealthz,
		PodLogsDir:               c.path("pod-logs"),
	})
	if err != nil {
		return err
	}
	// The kubelet keeps its default root dir, /var/lib/kubelet: a CSI
	// node plugin's DaemonSet names the kubelet's plugin and pod
	// directories by host path, and the storage VM's node has the default
	// too. Stop unmounts what is below it and removes it if it made it.
	args := append([]string{filepath.Join(c.bin, "kubelet")}, KubeletArgs(nodeDir, HostNodeName, HostNodeIP.String())...)
	return c.step("kubelet started", func() error { return c.Spawn("kubelet", args, nil) })
}

// setupNodeNetwork makes the veth pair with the node IP and the
// kubernetes service IP; the previous run's devices are replaced.
func (c *Local) setupNodeNetwork() error {
	_ = run("ip", "link", "del", nodeVeth)
	cmds := [][]string{
		{"ip", "link", "add", nodeVeth, "type", "veth", "peer", "name", nodeVethPeer},
		{"ip", "addr", "add", HostNodeIP.String() + "/32", "dev", nodeVeth},
		{"ip", "addr", "add", APIServiceIP.String() + "/32", "dev", nodeVeth},
		{"ip", "link", "set", nodeVeth, "up"},
		{"ip", "link", "set", nodeVethPeer, "up"},
	}
	for _, cmd := range cmds {
		if err := run(cmd...); err != nil {
			return err
		}
	}
	return nil
}

// startServiceForwarder stands in for kube-proxy for the one service pods
// need: the kubernetes service's ClusterIP:443 forwards to the apiserver
// (which listens on loopback only).
func (c *Local) startServiceForwarder() error {
	socat, err := vm.LookTool("socat")
	if err != nil {
		return fmt.Errorf("%w (package socat; scripts/ensure-cluster-deps.sh installs it)", err)
	}
	return c.Spawn("service-forwarder", []string{socat,
		"TCP-LISTEN:443,bind=" + APIServiceIP.String() + ",fork,reuseaddr",
		"TCP:127.0.0.1:" + strconv.Itoa(APIServerPort)}, nil)
}

// waitContainerd waits until containerd answers on its socket.
func (c *Local) waitContainerd(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if !c.Running("containerd") {
			return fmt.Errorf("containerd exited; the end of %s:\n%s", c.LogPath("containerd"), tail(c.LogPath("containerd"), 20))
		}
		if conn, err := net.DialTimeout("unix", c.ContainerdSocket(), time.Second); err == nil {
			conn.Close()
			if err := c.ctr(ctx, "version"); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd not answering on %s after %s; the end of its log:\n%s", c.ContainerdSocket(), timeout, tail(c.LogPath("containerd"), 20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ctr runs containerd's client against the node's containerd, in the
// namespace the CRI plugin uses.
func (c *Local) ctr(ctx context.Context, args ...string) error {
	ctr, err := vm.LookTool("ctr")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, ctr, append([]string{"--address", c.ContainerdSocket(), "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// run runs a host command, its output in the error.
func run(argv ...string) error {
	p, err := vm.LookTool(argv[0])
	if err != nil {
		return err
	}
	out, err := exec.Command(p, argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
