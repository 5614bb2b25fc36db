package sanity

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
	"github.com/switchyard-csi/switchyard/simulators/infinia"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// simHosts starts the simulated storage hosts the targets use, once each,
// when a config first needs them.
type simHosts struct {
	base    string
	zfs     *zfshost.Host
	truenas map[string]*truenashost.Host
	infinia *infiniahost.Host
	// infiniaTarget makes Infinia's exposures real (the storage VM's
	// kernel target); nil elsewhere.
	infiniaTarget infinia.Target
	kernel        *kernel.Reconciler // the VM's kernel targets; nil elsewhere
}

// bgCtx lives as long as the test binary: the hosts are closed explicitly.
var bgCtx = context.Background()

// stripDriverLine turns a switchyard Infinia config into DDN's own file.
func stripDriverLine(cfg string) string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		if !strings.HasPrefix(l, "driver:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func (h *simHosts) config(host, driver, name string) (string, error) {
	if host == "infinia" {
		return h.infiniaConfig(driver, name)
	}
	if host == "zfs" {
		if h.zfs == nil {
			z, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(h.base, "zfs-host"), PoolSize: 1 << 40, Kernel: h.kernel})
			if err != nil {
				return "", err
			}
			h.zfs = z
		}
		return h.zfs.DriverConfig(driver, name, sanityZFSExtra), nil
	}
	release, ok := strings.CutPrefix(host, "truenas-")
	if !ok {
		return "", fmt.Errorf("unknown simulated host %q", host)
	}
	if h.truenas == nil {
		h.truenas = map[string]*truenashost.Host{}
	}
	tn := h.truenas[release]
	if tn == nil {
		var err error
		tn, err = truenashost.Start(truenashost.Options{Dir: filepath.Join(h.base, host), Version: release, PoolSize: 1 << 40, SSH: true, Kernel: h.kernel})
		if err != nil {
			return "", err
		}
		h.truenas[release] = tn
	}
	return tn.DriverConfig(driver, name, sanityTrueNASExtra), nil
}

func (h *simHosts) close() {
	if h.zfs != nil {
		h.zfs.Close()
	}
	for _, t := range h.truenas {
		t.Close()
	}
	if h.infinia != nil {
		h.infinia.Close()
	}
}
