package zfshost

import "fmt"

// DriverConfig is a complete zfs-generic config for this host: driver is
// zfs-generic-nfs, -smb, -iscsi or -nvmeof; volumes go under tank/k8s/<name>
// and detached snapshots under tank/k8s/<name>-snapshots. zfsExtra (YAML
// indented by two spaces) is added to the zfs section.
func (h *Host) DriverConfig(driver, name, zfsExtra string) string {
	cfg := "driver: " + driver + "\n" + h.SSHConnection() + fmt.Sprintf(`zfs:
  datasetParentName: %[1]s/k8s/%[2]s
  detachedSnapshotsDatasetParentName: %[1]s/k8s/%[2]s-snapshots
  datasetEnableQuotas: true
`, h.Pool, name) + zfsExtra
	switch driver {
	case "zfs-generic-nfs", "zfs-generic-smb":
		proto, prop, value := "nfs", "sharenfs", "rw,no_subtree_check,no_root_squash"
		if driver == "zfs-generic-smb" {
			proto, prop, value = "smb", "sharesmb", "on"
		}
		cfg += fmt.Sprintf(`%s:
  shareStrategy: setDatasetProperties
  shareStrategySetDatasetProperties:
    properties:
      %s: %q
  shareHost: 127.0.0.1
`, proto, prop, value)
	case "zfs-generic-iscsi":
		cfg += `iscsi:
  shareStrategy: targetCli
  shareStrategyTargetCli:
    basename: iqn.2003-01.org.linux-iscsi.lab
    tpg:
      attributes:
        authentication: 0
        generate_node_acls: 1
        cache_dynamic_acls: 1
        demo_mode_write_protect: 0
  targetPortal: 127.0.0.1:3260
`
	case "zfs-generic-nvmeof":
		cfg += `nvmeof:
  transports:
    - tcp://127.0.0.1:4420
  shareStrategy: nvmetCli
  shareStrategyNvmetCli:
    basename: nqn.2003-01.org.linux-nvme.lab
    configIsImportedFilePath: /var/run/nvmet-config-loaded
    configPath: /etc/nvmet/config.json
    ports:
      - "1"
    subsystem:
      attributes:
        allow_any_host: 1
`
	}
	return cfg
}
