package sanity

// Targets of the backends of issue 14 other than Synology: nfs-client,
// smb-client and lustre-client (driver/shareclient). They are added from
// init so that targets_test.go needs no edit.

func init() { targets = append(targets, clientsTargets()...) }

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
