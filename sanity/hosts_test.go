package sanity

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/switchyard-csi/switchyard/lab/truenashost"
	"github.com/switchyard-csi/switchyard/lab/zfshost"
)

// simHosts starts the simulated storage hosts the targets use, once each,
// when a config first needs them.
type simHosts struct {
	base    string
	zfs     *zfshost.Host
	truenas map[string]*truenashost.Host
}

func (h *simHosts) config(host, driver, name string) (string, error) {
	if host == "zfs" {
		if h.zfs == nil {
			z, err := zfshost.Start(zfshost.Options{Dir: filepath.Join(h.base, "zfs-host"), PoolSize: 1 << 40})
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
		tn, err = truenashost.Start(truenashost.Options{Dir: filepath.Join(h.base, host), Version: release, PoolSize: 1 << 40, SSH: true})
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
}
