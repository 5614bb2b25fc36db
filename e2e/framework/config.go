// Package framework is what every e2e spec stands on: the cluster's
// clients, a namespace per spec whose objects are removed when the spec
// ends, waits that always have a deadline and say what they waited for,
// the driver's and kubelets' logs in an artifacts folder when a spec
// fails, and the timing table printed at the end of the run.
//
// Everything the suites need to know about the cluster comes from the
// environment (Config), which `make e2e` fills in after it has started
// the cluster and installed the chart; docs/testing.md lists the
// variables.
package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config describes the cluster under test and the deployments in it.
type Config struct {
	// Kubeconfig is the file of KUBECONFIG (required).
	Kubeconfig string
	// Provider says how the cluster was made: local (switchyard-lab
	// cluster up) or kind. It only labels the report.
	Provider string
	// Artifacts is where failure dumps and the timing table go.
	Artifacts string
	// Namespace of the driver's release (controller, node plugins, the
	// connections Secret).
	DriverNamespace string
	// Release is the main release's Helm release name (its pods carry
	// app.kubernetes.io/instance=<Release>).
	Release string
	// DriverName is the CSI driver name of the main release: the proxy
	// with nodeTopology type node (local-hostpath needs it), which serves
	// the data path, limits, reload and bad-input specs.
	DriverName string
	// Connections is where connection files of the main release are put:
	// "secret:<name>" (a Secret in DriverNamespace mounted as the
	// configFolder) or "dir:<path>" (a host folder mounted there).
	Connections string
	// ZonesDriverName, ZonesConnections and ZonesProvisioner describe the
	// second release, the proxy with nodeTopology type zone, that the
	// topology specs use. ZonesProvisioner is
	// "<deployment>/<container>" of its external-provisioner, whose flags
	// the specs set per mode. Empty ZonesDriverName skips them.
	ZonesDriverName  string
	ZonesConnections string
	ZonesProvisioner string
	// TopologyPrefix is proxy.nodeTopology.prefix of both releases.
	TopologyPrefix string
	// Image is the busybox image test pods run (imported into every
	// node's containerd: pulled never).
	Image string
	// LabFile is the JSON file describing the simulators the backends
	// other than local-hostpath use (backends.Lab). Empty: those
	// families skip.
	LabFile string
	// HostPathBase is local-hostpath's base path as the driver sees it,
	// HostPathHostBase the same folder as this test process sees it
	// (the host node's filesystem).
	HostPathBase     string
	HostPathHostBase string
	// KubeletLogs are glob patterns of kubelet log files copied into a
	// failure dump.
	KubeletLogs []string
	// TimeoutScale multiplies every wait (a slow machine: 2).
	TimeoutScale float64
}

// env reads a variable with a default.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// LoadConfig reads the E2E_* variables and KUBECONFIG.
func LoadConfig() (Config, error) {
	c := Config{
		Kubeconfig:       os.Getenv("KUBECONFIG"),
		Provider:         env("E2E_PROVIDER", "local"),
		Artifacts:        env("E2E_ARTIFACTS", filepath.Join(os.TempDir(), "switchyard-e2e-artifacts")),
		DriverNamespace:  env("E2E_DRIVER_NAMESPACE", "switchyard"),
		Release:          env("E2E_RELEASE", "switchyard"),
		DriverName:       env("E2E_DRIVER_NAME", "org.democratic-csi.proxy"),
		Connections:      env("E2E_CONNECTIONS", "secret:switchyard-connections"),
		ZonesDriverName:  os.Getenv("E2E_ZONES_DRIVER_NAME"),
		ZonesConnections: env("E2E_ZONES_CONNECTIONS", "secret:switchyard-zones-connections"),
		ZonesProvisioner: os.Getenv("E2E_ZONES_PROVISIONER"),
		TopologyPrefix:   env("E2E_TOPOLOGY_PREFIX", "org.democratic-csi.topology"),
		Image:            env("E2E_IMAGE", "switchyard.local/busybox:e2e"),
		LabFile:          os.Getenv("E2E_LAB_FILE"),
		HostPathBase:     env("E2E_HOSTPATH_BASE", "/var/lib/csi-local-hostpath"),
		HostPathHostBase: os.Getenv("E2E_HOSTPATH_HOST_BASE"),
		TimeoutScale:     1,
	}
	if c.HostPathHostBase == "" {
		c.HostPathHostBase = c.HostPathBase
	}
	if v := os.Getenv("E2E_KUBELET_LOGS"); v != "" {
		c.KubeletLogs = strings.Split(v, ",")
	}
	if v := os.Getenv("E2E_TIMEOUT_SCALE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return c, fmt.Errorf("E2E_TIMEOUT_SCALE=%q: want a positive number such as 2", v)
		}
		c.TimeoutScale = f
	}
	if c.Kubeconfig == "" {
		return c, fmt.Errorf("KUBECONFIG is not set: start a cluster (make e2e does: switchyard-lab cluster up) and export the kubeconfig it prints")
	}
	if _, err := os.Stat(c.Kubeconfig); err != nil {
		return c, fmt.Errorf("KUBECONFIG=%s: %w", c.Kubeconfig, err)
	}
	if _, _, err := ParseStore(c.Connections); err != nil {
		return c, fmt.Errorf("E2E_CONNECTIONS: %w", err)
	}
	return c, nil
}

// Scale stretches a timeout by TimeoutScale.
func (c Config) Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeoutScale)
}
