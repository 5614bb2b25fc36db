// Command e2e-lab writes the e2e suites' lab file (E2E_LAB_FILE) from the
// storage VM node's vmnode.json (lab/cluster writes it at
// <cluster state>/vm/<node>/vmnode.json): the node names and, for each
// simulator in the VM, the address its management port is forwarded to
// on the host. The VM forwards each port to the same number in the guest,
// so the address works for controllers on the host and in the VM alike.
//
// With the VM and its ZFS simulator it also makes the shares of the
// nfs-client and smb-client rows and has the VM's node mount them
// (shares.go); when that fails the rows are left out of the lab file, and
// say why when they run.
//
//	go run ./cmd/e2e-lab -vmnode vmnode.json -host-node lab-host -out lab.json
//	go run ./cmd/e2e-lab -host-node lab-host -out lab.json   (no VM: local-hostpath only)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/backends"
)

// vmNodeInfo is the part of lab/cluster's VMNodeInfo this reads (the
// e2e module does not import the lab).
type vmNodeInfo struct {
	Name       string `json:"name"`
	Simulators map[string]struct {
		Kind string `json:"kind"`
		Addr string `json:"addr"`
	} `json:"simulators"`
}

func main() {
	vmFile := flag.String("vmnode", "", "the VM node's vmnode.json (empty: no VM)")
	hostNode := flag.String("host-node", "lab-host", "the host's node name")
	password := flag.String("sim-password", "switchyard-lab", "root's password on the ZFS and TrueNAS simulators (lab/cluster DefaultSimPassword)")
	infiniaAccount := flag.String("infinia-account", "clu1/red/csiAccount", "the Infinia simulator's account")
	infiniaPassword := flag.String("infinia-password", "switchyard-lab", "its password")
	infiniaService := flag.String("infinia-service", "red/csiService", "its block service")
	synologyUser := flag.String("synology-user", "admin", "the DSM simulator's administrator (with --kernel also its SMB account)")
	hostZFS := flag.String("host-zfs", "", "host:port of a ZFS-over-SSH simulator on the host, for the topology and limit specs when there is no VM (its targets are not real: nothing mounts them)")
	mountRoot := flag.String("share-mount-root", "/var/lib/kubelet/switchyard-lab-shares", "where the VM's node mounts shares for its controller (lab/cluster VMShareMountRoot)")
	shareWait := flag.Duration("share-wait", 3*time.Minute, "how long the VM's node may take to mount a share")
	out := flag.String("out", "", "the lab file to write (required)")
	flag.Parse()
	if *out == "" {
		fail("-out is required")
	}
	lab := backends.Lab{HostNode: *hostNode}
	if *hostZFS != "" {
		lab.ZFS = &backends.ZFSHost{SSH: *hostZFS, User: "root", Password: *password}
	}
	if *vmFile != "" {
		data, err := os.ReadFile(*vmFile)
		if err != nil {
			fail("%v", err)
		}
		var in vmNodeInfo
		if err := json.Unmarshal(data, &in); err != nil {
			fail("%s: %v", *vmFile, err)
		}
		lab.VMNode = in.Name
		for name, s := range in.Simulators {
			switch s.Kind {
			case "zfs-ssh":
				lab.ZFS = &backends.ZFSHost{SSH: s.Addr, User: "root", Password: *password}
			case "truenas":
				lab.TrueNAS = &backends.TrueNASHost{URL: "http://" + s.Addr, User: "root", Password: *password}
			case "infinia":
				lab.Infinia = &backends.InfiniaHost{URL: "http://" + s.Addr, Account: *infiniaAccount, Password: *infiniaPassword, Service: *infiniaService}
			case "synology":
				// The DSM simulator in the VM (switchyard-lab synology
				// --kernel --plain); its password is the lab's.
				lab.Synology = &backends.SynologyHost{URL: "http://" + s.Addr, User: *synologyUser, Password: *password}
			default:
				fmt.Fprintf(os.Stderr, "e2e-lab: simulator %s: kind %q is not used by the suites\n", name, s.Kind)
			}
		}
		if z := lab.ZFS; z != nil {
			ctx, cancel := context.WithTimeout(context.Background(), *shareWait+2*time.Minute)
			run := func(ctx context.Context, cmd string) (string, error) {
				return backends.SSHRun(ctx, z.SSH, z.User, z.Password, cmd)
			}
			c, err := makeShares(ctx, run, z, filepath.Join(filepath.Dir(*vmFile), "mounts"), *mountRoot, *shareWait)
			cancel()
			if err != nil {
				fmt.Fprintf(os.Stderr, "e2e-lab: no shares for the nfs-client and smb-client rows: %v\n", err)
			} else {
				lab.ShareClients = c
			}
		}
	}
	data, _ := json.MarshalIndent(lab, "", "  ")
	if err := os.WriteFile(*out, append(data, '\n'), 0o600); err != nil {
		fail("%v", err)
	}
	if _, err := backends.LoadLab(*out); err != nil {
		fail("%v", err)
	}
	fmt.Println(*out)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "e2e-lab: "+format+"\n", a...)
	os.Exit(1)
}
