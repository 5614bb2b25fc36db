package sanity

import "fmt"

// noNodeZFS is why the node specs of the zfs-generic targets do not run on
// this machine: they need a kernel NFS/SMB client, an iSCSI initiator or
// NVMe/TCP, which this host kernel lacks; the storage VM tier runs them.
const noNodeZFS = "node specs need a kernel NFS/SMB client, iSCSI initiator or NVMe/TCP host: the host kernel has none (no modules); the storage VM tier (issue 6) runs them"

// zfsGeneric returns the config body of one zfs-generic driver on the
// simulated host, with its own parent datasets so listings do not mix.
func zfsGeneric(driver, parent string) string {
	body := fmt.Sprintf(`driver: %s
{{ssh}}zfs:
  datasetParentName: tank/k8s/%s/v
  detachedSnapshotsDatasetParentName: tank/k8s/%s/s
  datasetEnableQuotas: true
  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  zvolBlocksize: 16K
`, driver, parent, parent)
	switch driver {
	case "zfs-generic-nfs":
		body += `nfs:
  shareStrategy: setDatasetProperties
  shareStrategySetDatasetProperties:
    properties:
      sharenfs: "rw,no_subtree_check,no_root_squash"
  shareHost: 127.0.0.1
`
	case "zfs-generic-smb":
		body += `smb:
  shareStrategy: setDatasetProperties
  shareStrategySetDatasetProperties:
    properties:
      sharesmb: "on"
  shareHost: 127.0.0.1
`
	case "zfs-generic-iscsi":
		body += `iscsi:
  shareStrategy: targetCli
  shareStrategyTargetCli:
    basename: iqn.2003-01.org.linux-iscsi.sanity
    tpg:
      attributes:
        authentication: 0
        generate_node_acls: 1
        cache_dynamic_acls: 1
        demo_mode_write_protect: 0
  targetPortal: 127.0.0.1:3260
`
	case "zfs-generic-nvmeof":
		body += `nvmeof:
  transports:
    - tcp://127.0.0.1:4420
  shareStrategy: nvmetCli
  shareStrategyNvmetCli:
    basename: nqn.2003-01.org.linux-nvme.sanity
    configIsImportedFilePath: /var/run/nvmet-config-loaded
    configPath: /etc/nvmet/config.json
    ports:
      - "1"
    subsystem:
      attributes:
        allow_any_host: 1
`
	}
	return body
}

// zfsTargets: each zfs-generic driver directly, and all four behind one
// proxy (volumes made through the nfs connection; the others are there so
// listings cross connections).
func zfsTargets() []target {
	var ts []target
	kinds := []string{"nfs", "smb", "iscsi", "nvmeof"}
	for _, k := range kinds {
		ts = append(ts, target{name: "zfs-generic-" + k + "/direct", main: zfsGeneric("zfs-generic-"+k, k+"-direct"), zfs: true, noNode: noNodeZFS})
	}
	for _, k := range kinds {
		conns := map[string]string{}
		for _, other := range kinds {
			conns["zfs-"+other] = zfsGeneric("zfs-generic-"+other, other+"-proxy-"+k)
		}
		ts = append(ts, target{
			name:        "zfs-generic-" + k + "/proxy",
			main:        "driver: proxy\nproxy:\n  configFolder: {{dir}}/connections\n",
			connections: conns,
			params:      map[string]string{"connection": "zfs-" + k},
			zfs:         true,
			noNode:      noNodeZFS,
		})
	}
	return ts
}
