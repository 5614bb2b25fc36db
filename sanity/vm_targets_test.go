package sanity

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-csi/switchyard/lab/infiniahost"
	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// kernelEnv is set (to 1) when this test binary runs inside the storage VM
// (TestSanityInVM): the simulators then apply their targets and shares to
// the VM's real nvmet, LIO, nfsd and Samba, and the node specs run against
// them with the real initiators.
const kernelEnv = "SANITY_KERNEL"

func kernelMode() bool { return os.Getenv(kernelEnv) == "1" }

// vmTargetNames are the configurations the VM runs: every backend family
// through the proxy (one TrueNAS release: the others differ only in the
// API, which the host tier covers), plus Infinia standalone. freenas-nvmeof
// (datasets over SSH, nvmet through the API) joined on 2026-11-26 at about
// 70 s for its two configurations (file system and block).
var vmTargetNames = []string{
	"local-hostpath/proxy",
	"zfs-generic-nfs/proxy", "zfs-generic-smb/proxy", "zfs-generic-iscsi/proxy", "zfs-generic-nvmeof/proxy",
	"freenas-api-nfs@25.10/proxy", "freenas-api-smb@25.10/proxy", "freenas-api-iscsi@25.10/proxy", "freenas-api-nvmeof@25.10/proxy",
	"freenas-nvmeof@25.10/proxy",
	"infinia-nvmeof/direct", "infinia-nvmeof/proxy",
	"synology-iscsi/proxy", "synology-nfs/proxy", "synology-smb/proxy",
}

// blockBackends serve access type block: their VM targets run a second
// time with csi-sanity's volumes in block mode.
func blockBackend(name string) bool {
	return strings.Contains(name, "iscsi") || strings.Contains(name, "nvmeof")
}

// activeTargets is what this run tests: every configuration on the host
// (node specs only where the host kernel can), the VM set in the VM.
func activeTargets() []target {
	if !kernelMode() {
		return targets
	}
	byName := map[string]target{}
	for _, t := range targets {
		byName[t.name] = t
	}
	var out []target
	for _, n := range vmTargetNames {
		t, ok := byName[n]
		if !ok {
			panic("vmTargetNames names an unknown target " + n)
		}
		t.noNode = ""
		t.block = blockBackend(n)
		if strings.Contains(n, "smb") {
			t.nodeSecrets = map[string]string{"username": smbUser, "password": smbPassword}
		}
		out = append(out, t)
		if t.block {
			b := t
			b.name += "+block"
			b.accessType = "block"
			// Its own objects on the simulated hosts (an Infinia tenant
			// can be made only once).
			b.main = blockNames(b.main)
			b.connections = map[string]string{}
			for k, v := range t.connections {
				b.connections[k] = blockNames(v)
			}
			out = append(out, b)
		}
	}
	return out
}

// vmKernel is the VM's kernel targets, shared by every simulated host.
var vmKernel = sync.OnceValues(func() (*kernel.Reconciler, string) {
	r := kernel.New(kernel.Options{SMBUsers: map[string]string{smbUser: smbPassword}})
	if ok, reason := r.Available(); !ok {
		return nil, reason
	}
	// The node's iSCSI daemon: on a Kubernetes node the host runs it (the
	// VM has no systemd to socket-activate it).
	if exec.Command("pgrep", "-x", "iscsid").Run() != nil {
		if out, err := exec.Command("iscsid").CombinedOutput(); err != nil {
			return nil, fmt.Sprintf("starting iscsid: %v: %s", err, out)
		}
	}
	return r, ""
})

// The SMB account the VM's Samba knows; SMB targets stage with it.
const smbUser, smbPassword = "labuser", "labpass"

// useKernel wires the simulated hosts to the VM's kernel targets.
func (h *simHosts) useKernel(t testing.TB) {
	if !kernelMode() {
		return
	}
	r, reason := vmKernel()
	testtier.Need(t, testtier.VM, r != nil, "in the VM but the kernel targets are unusable: "+reason)
	h.kernel = r
	h.infiniaTarget = infiniahost.KernelTarget(r.Incremental("sanity-infinia"))
}

// blockNames renames the host objects of a target's placeholders.
func blockNames(s string) string {
	return hostPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		return strings.TrimSuffix(m, "}}") + "-blk}}"
	})
}
