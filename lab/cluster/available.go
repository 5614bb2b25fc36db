package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/switchyard-csi/switchyard/lab/vm"
)

// hostTools are the programs of scripts/ensure-cluster-deps.sh, by package.
var hostTools = [][2]string{
	{"etcd", "etcd-server"}, {"containerd", "containerd"}, {"ctr", "containerd"}, {"runc", "runc"},
	{"socat", "socat"}, {"ip", "iproute2"},
}

// Available reports whether this machine can run the local provider's
// clusters, and if not, why: root, the Debian packages, and the
// Kubernetes binaries either built or buildable (a Go toolchain and the
// checkout's lab/cluster/kubebuild module).
func Available() (ok bool, reason string) {
	if os.Geteuid() != 0 {
		return false, "the local cluster needs root (kubelet, containerd, network devices); euid is not 0"
	}
	var missing []string
	for _, t := range hostTools {
		if _, err := vm.LookTool(t[0]); err != nil {
			missing = append(missing, fmt.Sprintf("%s (package %s)", t[0], t[1]))
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		missing = append(missing, "/usr/lib/cni/bridge (package containernetworking-plugins)")
	}
	if len(missing) > 0 {
		return false, "missing " + strings.Join(missing, "; ") + "; scripts/ensure-cluster-deps.sh installs them"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if dir, built, err := KubeBinDir(ctx, ""); err != nil {
		return false, "the Kubernetes binaries: " + err.Error()
	} else if !built {
		if _, err := lookGo(); err != nil {
			return false, "the Kubernetes binaries are not built (" + dir + ") and cannot be: " + err.Error()
		}
	}
	return true, ""
}
