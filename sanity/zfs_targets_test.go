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
	// Host access (iscsi/nvmeof.hostAccess: allowList) behind the proxy:
	// node ids carry the IQN and NQN, the proxy advertises
	// PUBLISH_UNPUBLISH_VOLUME, so csi-sanity's ControllerPublish specs
	// run against grants on closed targets. The open connections beside
	// it publish through the proxy's fallback.
	for _, k := range []string{"iscsi", "nvmeof"} {
		ts = append(ts, target{
			name: "zfs-generic-" + k + "/proxy-allowlist",
			main: hostAccessMain,
			connections: map[string]string{
				"zfs-" + k:       "{{zfs zfs-generic-" + k + " " + k + "-allowlist allowList}}",
				"zfs-nfs-beside": "{{zfs zfs-generic-nfs nfs-allowlist-" + k + "}}",
			},
			params:  map[string]string{"connection": "zfs-" + k},
			noNode:  noNodeZFS,
			publish: true,
		})
	}
	// NVMe DH-HMAC-CHAP on top of the allow-list: publish sets the
	// connection's keys on each granted host; the node-stage secret
	// carries them to the node.
	ts = append(ts, target{
		name: "zfs-generic-nvmeof/proxy-allowlist-dhchap",
		main: hostAccessMain,
		connections: map[string]string{
			"zfs-nvmeof":     "{{zfs zfs-generic-nvmeof nvmeof-allowlist-dhchap allowList dhchap}}",
			"zfs-nfs-beside": "{{zfs zfs-generic-nfs nfs-allowlist-dhchap}}",
		},
		params:      map[string]string{"connection": "zfs-nvmeof"},
		noNode:      noNodeZFS,
		publish:     true,
		nodeSecrets: dhchapNodeSecrets,
	})
	return ts
}

// hostAccessMain is the main config of a proxy with connections whose
// targets admit only the nodes volumes are published to.
const hostAccessMain = `driver: proxy
proxy:
  configFolder: {{dir}}/connections
  nodeId:
    parts:
      iqn: true
      nqn: true
service:
  controller:
    capabilities:
      rpc: [CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, GET_CAPACITY, CREATE_DELETE_SNAPSHOT, CLONE_VOLUME, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER, LIST_VOLUMES, LIST_SNAPSHOTS, GET_SNAPSHOT]
`
