package node

import (
	"context"
	"net"
	"slices"
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
	return nfsShare.mount(ctx, h, v, nfsShare.device(v), nfsShare.fsType(v), nfsUnshared(plain, sensitive), sensitive)
}

// nfsUnshared adds nosharecache unless the volume's flags already say
// sharecache or nosharecache.
//
// Linux shares one NFS superblock among all mounts of one server's file
// system, so volumes that are directories of one export (nfs-client,
// node-manual PVs under one export) would all show one device in
// mountinfo. The kubelet's unmount-device check (mount-utils
// GetDeviceMountRefs) then counts every other volume's staging mount, and
// the controller's own mount of the share, as references to this one and
// never unstages it, so the volume stays attached and cannot be deleted
// (found by the e2e nfs-client row, 2026-11-26). nosharecache gives each
// mount its own superblock. For volumes that are file systems of their own
// (a dataset per volume: zfs-generic, TrueNAS, Synology) it changes
// nothing: their superblocks were separate already.
func nfsUnshared(plain, sensitive []string) []string {
	if hasFlag("sharecache", plain, sensitive) || hasFlag("nosharecache", plain, sensitive) {
		return plain
	}
	return append(slices.Clone(plain), "nosharecache")
}

// Unstage implements Attacher: the mount was all.
func (NFS) Unstage(context.Context, *Host, *Volume) error { return nil }
