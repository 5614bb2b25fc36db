package sanity

import "strings"

// Targets of the backends of issue 14 other than Synology: nfs-client,
// smb-client and lustre-client (driver/shareclient). They are added from
// init so that targets_test.go needs no edit.

func init() {
	targets = append(append(append(targets, clientsTargets()...), zfsLocalTargets()...), truenasNVMeoFSSHTargets()...)
}

// noNodeShareClient is why the share clients' node specs do not run on
// this host.
const noNodeShareClient = "node specs mount the share over NFS, SMB or Lustre: the host kernel has no nfs, cifs or lustre client (no modules)"

// clientsTargets: each share client standalone and behind the proxy. The
// "mounted share" is the target's scratch dir: once mounted, the controller
// sees the share as a directory, and checkControllerMount: false lets a
// directory on the local file system stand in for it. The scratch dir is
// the only directory that exists before the plugin starts (the driver
// never creates controllerBasePath: a missing one means an unmounted
// share), so the proxy target has a single connection.
func clientsTargets() []target {
	var out []target
	for _, c := range []struct{ driver, section string }{
		{"nfs-client", "nfs"}, {"smb-client", "smb"}, {"lustre-client", "lustre"},
	} {
		cfg := "driver: " + c.driver + "\n" + c.section + ":\n  shareHost: 192.0.2.10\n  shareBasePath: /export/k8s" +
			"\n  controllerBasePath: {{dir}}\n  checkControllerMount: false\n  dirPermissionsMode: \"0777\"\n"
		out = append(out,
			target{name: c.driver + "/direct", main: cfg, noNode: noNodeShareClient},
			target{
				name:        c.driver + "/proxy",
				main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
				connections: map[string]string{c.driver: cfg},
				params:      map[string]string{"connection": c.driver},
				noNode:      noNodeShareClient,
			})
	}
	return out
}

// node-manual has no targets: it provisions nothing (static PVs), while
// csi-sanity's ValidateVolumeCapabilities and node specs need volumes from
// CreateVolume whatever the advertised capabilities; a run gives failures
// that say nothing about node-manual. driver/nodemanual's tests stage
// democratic-csi's example PVs through the node service instead.

// noNodeZFSLocal is why zfs-local's node specs do not run here: the
// simulated host's datasets are not mounted on this machine and its zvols
// have no /dev/zvol device.
const noNodeZFSLocal = "node specs stage the node's own datasets and zvols: the simulated ZFS host's are not on this machine (driver/zfslocal's fidelity tests mount real zfs-fuse datasets)"

// zfsLocalTargets: zfs-local-dataset and zfs-local-zvol against the
// simulated ZFS host (the model), reached over SSH as if it were the node's
// own sshd, standalone and behind the proxy (nodeTopology node: the volumes
// are node-local).
func zfsLocalTargets() []target {
	var out []target
	for _, d := range []string{"zfs-local-dataset", "zfs-local-zvol"} {
		short := strings.TrimPrefix(d, "zfs-")
		out = append(out,
			target{name: d + "/direct", main: "{{zfs " + d + " " + short + "-direct}}", noNode: noNodeZFSLocal, block: d == "zfs-local-zvol"},
			target{
				name:        d + "/proxy",
				main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n  nodeTopology:\n    type: node\n",
				connections: map[string]string{short: "{{zfs " + d + " " + short + "-proxy}}"},
				params:      map[string]string{"connection": short},
				noNode:      noNodeZFSLocal, block: d == "zfs-local-zvol",
			})
	}
	return out
}

// truenasNVMeoFSSHTargets: freenas-nvmeof (zfs over SSH, nvmet through the
// API) on the releases that have nvmet, standalone and behind the proxy
// next to its API twin, and truenas-nvmeof (the alias) standalone.
func truenasNVMeoFSSHTargets() []target {
	var out []target
	for _, rel := range []string{"25.10", "26.04"} {
		host := "truenas-" + rel
		tag := strings.ReplaceAll(rel, ".", "")
		out = append(out,
			target{name: "freenas-nvmeof@" + rel + "/direct", main: "{{" + host + " freenas-nvmeof nvmeof-ssh-" + tag + "-direct}}", noNode: noNodeTrueNAS, block: true},
			target{
				name: "freenas-nvmeof@" + rel + "/proxy",
				main: "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
				connections: map[string]string{
					"tn-nvmeof-ssh": "{{" + host + " freenas-nvmeof nvmeof-ssh-" + tag + "-proxy}}",
					"tn-nvmeof-api": "{{" + host + " freenas-api-nvmeof nvmeof-api-" + tag + "-proxy-ssh}}",
				},
				params: map[string]string{"connection": "tn-nvmeof-ssh"},
				noNode: noNodeTrueNAS, block: true,
			})
	}
	out = append(out, target{name: "truenas-nvmeof@26.04/direct", main: "{{truenas-26.04 truenas-nvmeof tnvmeof-ssh-2604-direct}}", noNode: noNodeTrueNAS, block: true})
	return out
}
