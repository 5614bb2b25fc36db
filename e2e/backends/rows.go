package backends

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// localHostpath: a directory on the host node; no VM.
func localHostpath() Family {
	return Family{
		Name: "local-hostpath", Short: "lhp", Filesystem: true, Snapshots: true, MaxIDLen: 64,
		Available: func(*Env) (bool, string) { return true, "" },
		Connection: func(e *Env, conn string) string {
			base := filepath.Join(e.HostPathBase, conn)
			return fmt.Sprintf("driver: local-hostpath\ninstance_id: e2e\nlocal-hostpath:\n  shareBasePath: %s\n  controllerBasePath: %s\n", base, base)
		},
		Leftovers: func(_ context.Context, e *Env, conn string, _ []string) ([]string, error) {
			base := filepath.Join(e.HostPathHostBase, conn)
			var left []string
			for _, sub := range []string{"v", "s", ".switchyard/volumes", ".switchyard/snapshots"} {
				ents, err := os.ReadDir(filepath.Join(base, sub))
				if os.IsNotExist(err) {
					continue
				}
				if err != nil {
					return nil, err
				}
				for _, de := range ents {
					left = append(left, filepath.Join(sub, de.Name()))
				}
			}
			return left, nil
		},
	}
}

// zfsGeneric: datasets and zvols on the ZFS-over-SSH simulator, served by
// the storage VM's kernel.
func zfsGeneric(driver, short string, block bool) Family {
	f := Family{
		Name: driver, Short: short, Filesystem: true, Block: block, NeedsVM: true, ExpandVisible: block, Snapshots: true,
		MaxIDLen: 96, OverLimit: "snapshot", // zfs snapshot ids: <volume id>@<name>
		StorageSize: func(ctx context.Context, e *Env, conn, id string) (int64, error) {
			z := e.Lab.ZFS
			prop := "refquota"
			if block {
				prop = "volsize"
			}
			return zfsSize(ctx, or(z.CheckSSH, z.SSH), z.User, z.Password, or(z.Pool, "tank")+"/k8s/"+conn+"/"+id, prop)
		},
		Available: func(e *Env) (bool, string) {
			if e.Lab.ZFS == nil {
				return false, "E2E_LAB_FILE describes no ZFS-over-SSH host (zfs)"
			}
			return true, ""
		},
		Connection: func(e *Env, conn string) string { return zfsConnection(e.Lab.ZFS, driver, conn) },
		Leftovers: func(ctx context.Context, e *Env, conn string, made []string) ([]string, error) {
			z := e.Lab.ZFS
			return zfsLeftovers(ctx, or(z.CheckSSH, z.SSH), z.User, z.Password, or(z.Pool, "tank"), conn)
		},
	}
	if block {
		f.FSType = "ext4"
	}
	if driver == "zfs-generic-smb" {
		f.NodeStageSecret = func(e *Env) map[string]string {
			return map[string]string{"username": e.Lab.ZFS.User, "password": e.Lab.ZFS.Password}
		}
	}
	return f
}

func zfsConnection(z *ZFSHost, driver, conn string) string {
	host, port, _ := net.SplitHostPort(z.SSH)
	pool := or(z.Pool, "tank")
	target := or(z.TargetHost, "127.0.0.1")
	var b strings.Builder
	fmt.Fprintf(&b, "driver: %s\ninstance_id: e2e\nsshConnection:\n  host: %s\n  port: %s\n  username: %s\n  password: %q\n", driver, host, port, z.User, z.Password)
	fmt.Fprintf(&b, "zfs:\n  datasetParentName: %[1]s/k8s/%[2]s\n  detachedSnapshotsDatasetParentName: %[1]s/k8s/%[2]s-snapshots\n  datasetEnableQuotas: true\n  datasetPermissionsMode: \"0777\"\n", pool, conn)
	switch driver {
	case "zfs-generic-nfs":
		fmt.Fprintf(&b, "nfs:\n  shareStrategy: setDatasetProperties\n  shareStrategySetDatasetProperties:\n    properties:\n      sharenfs: \"rw,no_subtree_check,no_root_squash\"\n  shareHost: %s\n", target)
	case "zfs-generic-smb":
		fmt.Fprintf(&b, "smb:\n  shareStrategy: setDatasetProperties\n  shareStrategySetDatasetProperties:\n    properties:\n      sharesmb: \"on\"\n  shareHost: %s\n", target)
	case "zfs-generic-iscsi":
		fmt.Fprintf(&b, `iscsi:
  shareStrategy: targetCli
  shareStrategyTargetCli:
    basename: iqn.2003-01.org.linux-iscsi.e2e
    tpg:
      attributes:
        authentication: 0
        generate_node_acls: 1
        cache_dynamic_acls: 1
        demo_mode_write_protect: 0
  targetPortal: %s
`, net.JoinHostPort(target, strconv.Itoa(orInt(z.ISCSIPort, 3260))))
	case "zfs-generic-nvmeof":
		fmt.Fprintf(&b, `nvmeof:
  transports:
    - tcp://%s
  shareStrategy: nvmetCli
  shareStrategyNvmetCli:
    basename: nqn.2003-01.org.linux-nvme.e2e
    ports:
      - "1"
    subsystem:
      attributes:
        allow_any_host: 1
`, net.JoinHostPort(target, strconv.Itoa(orInt(z.NVMePort, 4420))))
	}
	return b.String()
}

// truenasAPI: the TrueNAS middleware simulator, served by the VM's kernel.
func truenasAPI(driver, short string, block bool) Family {
	f := Family{
		Name: driver, Short: short, Filesystem: true, Block: block, NeedsVM: true, ExpandVisible: block, Snapshots: true,
		MaxIDLen: 96, OverLimit: "snapshot", // zfs snapshot ids: <volume id>@<name>
		Available: func(e *Env) (bool, string) {
			if e.Lab.TrueNAS == nil {
				return false, "E2E_LAB_FILE describes no TrueNAS simulator (truenas)"
			}
			return true, ""
		},
		Connection: func(e *Env, conn string) string { return truenasConnection(e.Lab.TrueNAS, driver, conn) },
		Leftovers: func(ctx context.Context, e *Env, conn string, made []string) ([]string, error) {
			t := e.Lab.TrueNAS
			return truenasLeftovers(ctx, or(t.CheckURL, t.URL), t, or(t.Pool, "tank"), conn)
		},
	}
	if block {
		f.FSType = "ext4"
	}
	return f
}

func truenasConnection(t *TrueNASHost, driver, conn string) string {
	u, _ := url.Parse(t.URL)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		port = or(port, "80")
	}
	pool := or(t.Pool, "tank")
	target := or(t.TargetHost, "127.0.0.1")
	var b strings.Builder
	fmt.Fprintf(&b, "driver: %s\ninstance_id: e2e\nhttpConnection:\n  protocol: %s\n  host: %s\n  port: %s\n  username: %s\n",
		driver, u.Scheme, u.Hostname(), port, or(t.User, "root"))
	if t.APIKey != "" {
		fmt.Fprintf(&b, "  apiKey: %q\n", t.APIKey)
	} else {
		fmt.Fprintf(&b, "  password: %q\n", t.Password)
	}
	switch {
	case u.Scheme == "http" && t.APIKey != "":
		// The lab's simulator listens on loopback only: a key in clear
		// text never leaves the machine.
		b.WriteString("  allowPlaintextApiKey: true\n")
	case u.Scheme == "https":
		b.WriteString("  allowInsecure: true\n") // the simulator's certificate is made per run
	}
	fmt.Fprintf(&b, "zfs:\n  datasetParentName: %[1]s/k8s/%[2]s\n  detachedSnapshotsDatasetParentName: %[1]s/k8s/%[2]s-snapshots\n  datasetEnableQuotas: true\n", pool, conn)
	switch {
	case strings.HasSuffix(driver, "-nfs"):
		fmt.Fprintf(&b, "nfs:\n  shareHost: %s\n  shareAllowedNetworks: []\n  shareMaprootUser: root\n  shareMaprootGroup: root\n", target)
	case strings.HasSuffix(driver, "-iscsi"):
		fmt.Fprintf(&b, "iscsi:\n  targetPortal: %s\n  targetGroups:\n    - targetGroupPortalGroup: 1\n      targetGroupInitiatorGroup: 1\n      targetGroupAuthType: None\n",
			net.JoinHostPort(target, strconv.Itoa(orInt(t.ISCSIPort, 3260))))
	case strings.HasSuffix(driver, "-nvmeof"):
		fmt.Fprintf(&b, "nvmeof:\n  transports:\n    - tcp://%s\n", net.JoinHostPort(target, strconv.Itoa(orInt(t.NVMePort, 4420))))
	}
	return b.String()
}

// infiniaNVMeoF: block volumes on the Infinia simulator over NVMe/TCP.
// ControllerPublishVolume grants the node's NQN, so the release needs
// proxy.nodeId.parts.nqn, PUBLISH_UNPUBLISH_VOLUME and attachRequired.
func infiniaNVMeoF() Family {
	return Family{
		Name: "infinia-nvmeof", Short: "inf", Filesystem: true, Block: true, FSType: "ext4", NeedsVM: true, ExpandVisible: true,
		MaxIDLen: 96, OverLimit: "volume", // <account>:<subtenant>/<service>/<volume>, shortened to fit; no snapshots
		Available: func(e *Env) (bool, string) {
			if e.Lab.Infinia == nil {
				return false, "E2E_LAB_FILE describes no Infinia simulator (infinia)"
			}
			return true, ""
		},
		Connection: func(e *Env, conn string) string {
			i := e.Lab.Infinia
			s := fmt.Sprintf("driver: infinia-nvmeof\naccounts:\n  %s:\n    apis:\n    - %s\n    password: %q\n    insecureSkipVerify: true\n", i.Account, i.URL, i.Password)
			if i.DataPort != 0 {
				s += fmt.Sprintf("    default_data_port: %d\n", i.DataPort)
			}
			return s
		},
		Parameters: func(e *Env) map[string]string {
			return map[string]string{"account": e.Lab.Infinia.Account, "service": e.Lab.Infinia.Service}
		},
		Leftovers: func(ctx context.Context, e *Env, conn string, made []string) ([]string, error) {
			return infiniaLeftovers(ctx, e.Lab.Infinia, made)
		},
	}
}
