package backends

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// ClientsRelease is the Family.Release of the share clients' rows: a
// second install of the chart (e2e/deploy/clients-values.yaml) whose only
// node plugin runs on the storage VM's node. nfs-client and smb-client
// need their share mounted on the controller that serves a call, and the
// main release's controllers run on every node (strategy node, for
// local-hostpath), where csi-resizer and csi-attacher are leader-elected
// across all nodes: the leader is the host's, which has no NFS or CIFS
// client, so an expansion there could never record the new size
// (docs/backends/share-clients.md, "Which controller serves a call").
const ClientsRelease = "clients"

// ShareClients are the existing shares the nfs-client and smb-client rows
// make volumes in: two datasets of the ZFS-over-SSH simulator in the
// storage VM (sharenfs and sharesmb set, so nfsd and Samba serve them for
// real), mounted by the VM's node at the controllers' controllerBasePath
// (e2e-lab writes both; lab/cluster files/vm-mounts.sh mounts).
type ShareClients struct {
	// Server is the address nodes mount from (default 127.0.0.1: nfsd
	// and Samba run in the VM node).
	Server string `json:"server,omitempty"`
	// NFSExport is the exported dataset's path on the server, NFSMount
	// where the VM node has it mounted (nfs.controllerBasePath).
	NFSExport string `json:"nfsExport"`
	NFSMount  string `json:"nfsMount"`
	// SMBShare is the share's name, SMBPath its dataset's path on the
	// server (for the check), SMBMount where the VM node has it mounted.
	// The SMB account is the ZFS host's user.
	SMBShare string `json:"smbShare"`
	SMBPath  string `json:"smbPath"`
	SMBMount string `json:"smbMount"`
}

func (c *ShareClients) check() string {
	for _, p := range []string{c.NFSExport, c.NFSMount, c.SMBPath, c.SMBMount} {
		if !strings.HasPrefix(p, "/") {
			return "shareClients: nfsExport, nfsMount, smbPath and smbMount must be absolute paths"
		}
	}
	if c.SMBShare == "" || strings.ContainsAny(c.SMBShare, "/\\ ") {
		return "shareClients: smbShare must be a share name"
	}
	return ""
}

// shareClient is the nfs-client or smb-client row: volumes are
// subdirectories of a share (driver/shareclient), Filesystem only;
// snapshots and restores are copies; an expansion records the size, which
// no kernel enforces (ExpandVisible false), and there is no size on the
// storage to read but the controller's own metadata.
func shareClient(driver, short string) Family {
	smb := driver == "smb-client"
	f := Family{
		Name: driver, Short: short, Filesystem: true, NeedsVM: true, Snapshots: true, Release: ClientsRelease,
		MaxIDLen: 64, // dirvol.MaxIDLen; Kubernetes' names (40 and 45 bytes) never overflow
		Available: func(e *Env) (bool, string) {
			switch {
			case e.Lab.ShareClients == nil:
				return false, "E2E_LAB_FILE describes no shares for the share clients (shareClients; e2e-lab makes them in the storage VM)"
			case e.Lab.ZFS == nil:
				return false, "E2E_LAB_FILE describes no ZFS-over-SSH host (zfs), which serves the share clients' shares"
			}
			return true, ""
		},
		Connection: func(e *Env, _ string) string {
			c := e.Lab.ShareClients
			server := or(c.Server, "127.0.0.1")
			if smb {
				return fmt.Sprintf("driver: smb-client\ninstance_id: e2e\nsmb:\n  shareHost: %s\n  shareBasePath: /%s\n  controllerBasePath: %s\n", server, c.SMBShare, c.SMBMount)
			}
			return fmt.Sprintf("driver: nfs-client\ninstance_id: e2e\nnfs:\n  shareHost: %s\n  shareBasePath: %s\n  controllerBasePath: %s\n", server, c.NFSExport, c.NFSMount)
		},
		Leftovers: func(ctx context.Context, e *Env, _ string, _ []string) ([]string, error) {
			dir := e.Lab.ShareClients.NFSExport
			if smb {
				dir = e.Lab.ShareClients.SMBPath
			}
			z := e.Lab.ZFS
			return shareLeftovers(ctx, or(z.CheckSSH, z.SSH), z.User, z.Password, dir)
		},
	}
	// No mountOptions: every nfs-client volume is a subdirectory of one
	// export, and the row proves that the node's NFS attacher gives each
	// mount its own superblock by default (nosharecache; without it the
	// kubelet never unstages a volume while another of the share is
	// staged: docs/backends/share-clients.md).
	if smb {
		f.NodeStageSecret = func(e *Env) map[string]string {
			return map[string]string{"username": e.Lab.ZFS.User, "password": e.Lab.ZFS.Password}
		}
	}
	return f
}

// shareDirs are the directories driver/dirvol keeps a share's volumes,
// snapshots and metadata in (docs/backends/share-clients.md): every entry
// in them is something a connection made.
var shareDirs = []string{"v", "s", ".switchyard/volumes", ".switchyard/snapshots"}

// shareLeftovers lists the entries of a share's volume, snapshot and
// metadata directories, read on the server (the ZFS host's shell over
// SSH, which sees the dataset's real directory), not through the
// controller's mount. The share holds every connection's volumes, so the
// caller keeps the entries naming its own ids.
func shareLeftovers(ctx context.Context, addr, user, password, dir string) ([]string, error) {
	var left []string
	for _, sub := range shareDirs {
		p := path.Join(dir, sub)
		// -a, not -A: the simulator's ls hides dot entries under -A, and a
		// half-built (.tmp-<id>) or half-removed (.del-<id>) copy counts.
		out, err := SSHRun(ctx, addr, user, password, "ls -1a "+p)
		if err != nil {
			if strings.Contains(out, "No such file or directory") {
				continue // nothing made there yet
			}
			return nil, fmt.Errorf("ls %s on %s: %v: %s", p, addr, err, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if l = strings.TrimSpace(l); l != "" && l != "." && l != ".." {
				left = append(left, path.Join(sub, l))
			}
		}
	}
	return left, nil
}
