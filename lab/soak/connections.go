package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// conn is one connection file of the proxy deployment under test.
type conn struct {
	Name   string
	Driver string
	Sim    string // simZFS, simTrueNAS, simInfinia, or "" (local-hostpath)
	Block  bool   // volumes are block devices (iSCSI, NVMe-oF)
	// Snapshots: the backend offers snapshots and clones (Infinia does not).
	Snapshots bool
	// Publish: ControllerPublishVolume grants the node (Infinia's host NQN).
	Publish bool
}

// conns is every connection the soak drives: each protocol of each
// simulated host, over every transport a driver has.
var conns = []conn{
	{Name: "zg-nfs", Driver: "zfs-generic-nfs", Sim: simZFS, Snapshots: true},
	{Name: "zg-iscsi", Driver: "zfs-generic-iscsi", Sim: simZFS, Block: true, Snapshots: true},
	{Name: "zg-nvme", Driver: "zfs-generic-nvmeof", Sim: simZFS, Block: true, Snapshots: true},
	{Name: "tn-ws-nfs", Driver: "freenas-api-nfs", Sim: simTrueNAS, Snapshots: true},
	{Name: "tn-ws-iscsi", Driver: "freenas-api-iscsi", Sim: simTrueNAS, Block: true, Snapshots: true},
	{Name: "tn-ws-nvme", Driver: "freenas-api-nvmeof", Sim: simTrueNAS, Block: true, Snapshots: true},
	{Name: "tn-rest-nfs", Driver: "freenas-api-nfs", Sim: simTrueNAS, Snapshots: true},
	{Name: "tn-rest-iscsi", Driver: "freenas-api-iscsi", Sim: simTrueNAS, Block: true, Snapshots: true},
	{Name: "tn-rest-nvme", Driver: "freenas-api-nvmeof", Sim: simTrueNAS, Block: true, Snapshots: true},
	{Name: "tn-ssh-nfs", Driver: "freenas-nfs", Sim: simTrueNAS, Snapshots: true},
	{Name: "tn-ssh-iscsi", Driver: "freenas-iscsi", Sim: simTrueNAS, Block: true, Snapshots: true},
	{Name: "infinia", Driver: "infinia-nvmeof", Sim: simInfinia, Block: true, Publish: true},
	{Name: "hostpath", Driver: "local-hostpath", Snapshots: true},
}

func connByName(name string) conn {
	for _, c := range conns {
		if c.Name == name {
			return c
		}
	}
	return conn{}
}

// zfsExtra is the zfs section's tail for the ZFS hosts (as sanity's).
const zfsExtra = `  datasetPermissionsMode: "0777"
  datasetPermissionsUser: 0
  datasetPermissionsGroup: 0
  zvolBlocksize: 16K
`

// hostNQN is the node's NVMe host NQN (proxy.nodeId.nqnFile).
const hostNQN = "nqn.2014-08.org.nvmexpress:uuid:50a50000-5a1e-4c5b-9d1e-000000000017"

// nodeName is the node the soak's node plugin is (CSI_NODE_ID).
const nodeName = "soak-node"

// writeConfigs writes the main config and every connection file into dir
// and returns the main config's path. The addresses are the hosts' first
// ones: a restarted host keeps them.
func writeConfigs(dir string, h *hosts) (string, error) {
	connDir := filepath.Join(dir, "connections")
	files := map[string]string{
		filepath.Join(dir, "hostnqn"): hostNQN + "\n",
		filepath.Join(dir, "main.yaml"): fmt.Sprintf(`driver: proxy
proxy:
  configFolder: %s
  nodeTopology:
    type: node
  nodeId:
    parts:
      nodeName: true
      nqn: true
    nqnFile: %s
service:
  controller:
    capabilities:
      rpc: [CREATE_DELETE_VOLUME, GET_CAPACITY, CREATE_DELETE_SNAPSHOT, CLONE_VOLUME, EXPAND_VOLUME, SINGLE_NODE_MULTI_WRITER,
            LIST_VOLUMES, LIST_SNAPSHOTS, GET_SNAPSHOT, PUBLISH_UNPUBLISH_VOLUME]
`, connDir, filepath.Join(dir, "hostnqn")),
	}
	for _, c := range conns {
		var cfg string
		switch c.Sim {
		case simZFS:
			cfg = h.zfs.DriverConfig(c.Driver, c.Name, zfsExtra)
		case simTrueNAS:
			cfg = h.tn.DriverConfig(c.Driver, c.Name, zfsExtra)
			switch {
			case strings.HasPrefix(c.Name, "tn-ws-"):
				cfg = strings.Replace(cfg, "httpConnection:\n", "httpConnection:\n  transport: websocket\n", 1)
			case strings.HasPrefix(c.Name, "tn-rest-"):
				cfg = strings.Replace(cfg, "httpConnection:\n", "httpConnection:\n  transport: rest\n", 1)
			}
		case simInfinia:
			cfg = string(h.inf.DriverConfig(c.Name, nil))
		default:
			cfg = fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s\n  controllerBasePath: %[1]s\n", hostpathDir(dir))
		}
		files[filepath.Join(connDir, c.Name+".yaml")] = cfg
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "main.yaml"), nil
}

func hostpathDir(dir string) string { return filepath.Join(dir, "hostpath") }
