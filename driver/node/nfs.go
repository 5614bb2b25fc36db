package node

import (
	"context"
	"net"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/volumecontext"
)

// NFS is the "nfs" attacher: volume_context server and share are mounted
// as server:share with mount -t nfs and the volume's mount flags.
type NFS struct{}

var nfsShare = share{
	name:    "nfs",
	fsTypes: []string{"nfs", "nfs4"},
	source: func(server, share string) string {
		// mount.nfs needs an IPv6 server in brackets.
		if strings.Contains(server, ":") && !strings.HasPrefix(server, "[") && net.ParseIP(server) != nil {
			server = "[" + server + "]"
		}
		return server + ":" + share
	},
	decode: func(vc map[string]string) (string, string, error) {
		var c volumecontext.NFS
		err := c.Decode(vc)
		return c.Server, c.Share, err
	},
}

// Name implements Attacher.
func (NFS) Name() string { return "nfs" }

// Validate implements Attacher.
func (NFS) Validate(v *Volume) error { return nfsShare.validate(v) }

// Stage implements Attacher.
func (NFS) Stage(ctx context.Context, h *Host, v *Volume) error {
	plain, sensitive := mountFlags(v)
	return nfsShare.mount(ctx, h, v, nfsShare.device(v), nfsShare.fsType(v), plain, sensitive)
}

// Unstage implements Attacher: the mount was all.
func (NFS) Unstage(context.Context, *Host, *Volume) error { return nil }
