package sanity

// noNodeZFS is why the node specs of the zfs-generic targets do not run on
// this machine: they need a kernel NFS/SMB client, an iSCSI initiator or
// NVMe/TCP, which this host kernel lacks; the storage VM tier runs them.
const noNodeZFS = "node specs need a kernel NFS/SMB client, iSCSI initiator or NVMe/TCP host: the host kernel has none (no modules); the storage VM tier (issue 6) runs them"

// sanityZFSExtra adds permissions and an explicit zvol block size, so the
// suite also exercises chmod/chown and volsize alignment.
const sanityZFSExtra = `  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  zvolBlocksize: 16K
`

// zfsTargets: each zfs-generic driver directly, and all four behind one
// proxy (volumes made through the connection named after the target; the
// others are there so listings cross connections). Every configuration has
// its own parent datasets, so listings do not mix.
func zfsTargets() []target {
	var ts []target
	kinds := []string{"nfs", "smb", "iscsi", "nvmeof"}
	for _, k := range kinds {
		ts = append(ts, target{name: "zfs-generic-" + k + "/direct", main: "{{zfs zfs-generic-" + k + " " + k + "-direct}}", noNode: noNodeZFS})
	}
	for _, k := range kinds {
		conns := map[string]string{}
		for _, other := range kinds {
			conns["zfs-"+other] = "{{zfs zfs-generic-" + other + " " + other + "-proxy-" + k + "}}"
		}
		ts = append(ts, target{
			name:        "zfs-generic-" + k + "/proxy",
			main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
			connections: conns,
			params:      map[string]string{"connection": "zfs-" + k},
			noNode:      noNodeZFS,
		})
	}
	return ts
}
