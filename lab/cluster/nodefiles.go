package cluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// KubeletOptions are what differs between the lab's nodes. The zero value
// is the host node's setting except for the runtime endpoint and ports.
type KubeletOptions struct {
	// CgroupDriver is "cgroupfs" (default; no systemd in the lab's nodes)
	// or "systemd".
	CgroupDriver string
	// ContainerRuntimeEndpoint is the CRI socket, e.g.
	// unix:///run/containerd/containerd.sock (the default).
	ContainerRuntimeEndpoint string
	// Port is the kubelet API port (default 10250) and HealthzPort its
	// healthz port on 127.0.0.1 (default 10248).
	Port, HealthzPort int
	// PodLogsDir is where container logs go (default /var/log/pods).
	PodLogsDir string
	// NoControllerAttachDetach makes the kubelet attach volumes itself
	// (enableControllerAttachDetach: false) instead of waiting for
	// VolumeAttachments from kube-controller-manager.
	NoControllerAttachDetach bool
}

// kubeletConfig renders kubelet-config.yaml. Paths in it are relative to the
// file's directory (the kubelet resolves them so), which is what lets the
// storage VM read the same directory at another path.
//
// failCgroupV1: false because v1.37 refuses cgroup v1 otherwise and the lab
// hosts run v1; failSwapOn: false as lab hosts may swap. The kubelet API
// takes only clients with a certificate of the cluster CA and authorizes
// them all: the apiserver is the only such client besides the admin.
// Eviction thresholds are tiny so a full disk on a developer's machine does
// not evict the test's pods.
func kubeletConfig(o KubeletOptions) string {
	if o.CgroupDriver == "" {
		o.CgroupDriver = "cgroupfs"
	}
	if o.ContainerRuntimeEndpoint == "" {
		o.ContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"
	}
	if o.Port == 0 {
		o.Port = 10250
	}
	if o.HealthzPort == 0 {
		o.HealthzPort = 10248
	}
	if o.PodLogsDir == "" {
		o.PodLogsDir = "/var/log/pods"
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: %s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
podLogsDir: %s
enableControllerAttachDetach: %t
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: ca.crt
authorization:
  mode: AlwaysAllow
registerNode: true
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 1Mi
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
  imagefs.inodesFree: "1%%"
`, o.CgroupDriver, o.ContainerRuntimeEndpoint, o.Port, o.HealthzPort, o.PodLogsDir, !o.NoControllerAttachDetach)
}

// WriteNodeFiles writes a kubelet node's bootstrap files into dir:
//
//	kubeconfig           the node's client certificate (CN system:node:<nodeName>, group system:nodes), server apiserverURL
//	ca.crt               the cluster CA (the kubelet's client CA too)
//	kubelet-config.yaml  the host node's settings with o applied
//	kubelet.args         the kubelet's flags, one per line, paths relative to dir
//
// nodeIP is the address the node registers (--node-ip). The storage VM's
// kubelet uses apiserverURL https://10.0.2.100:<port> (VMAPIServerIP is in
// the apiserver's certificate).
func (c *Local) WriteNodeFiles(dir, nodeName, nodeIP, apiserverURL string, o KubeletOptions) error {
	if net.ParseIP(nodeIP) == nil {
		return fmt.Errorf("node %s: node IP %q is not an IP address", nodeName, nodeIP)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cert, err := c.pki.nodeCert(nodeName)
	if err != nil {
		return fmt.Errorf("node %s: %w", nodeName, err)
	}
	if err := writeKubeconfig(filepath.Join(dir, "kubeconfig"), apiserverURL, c.pki.ca.CertPEM, "system:node:"+nodeName, cert); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), c.pki.ca.CertPEM, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kubelet-config.yaml"), []byte(kubeletConfig(o)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kubelet.args"), []byte(strings.Join(KubeletArgs(".", nodeName, nodeIP), "\n")+"\n"), 0o644)
}

// KubeletArgs are the kubelet's flags for the files WriteNodeFiles wrote
// into dir. Add --root-dir (default /var/lib/kubelet) as needed.
func KubeletArgs(dir, nodeName, nodeIP string) []string {
	return []string{
		"--config=" + filepath.Join(dir, "kubelet-config.yaml"),
		"--kubeconfig=" + filepath.Join(dir, "kubeconfig"),
		"--hostname-override=" + nodeName,
		"--node-ip=" + nodeIP,
		"--v=2",
	}
}
