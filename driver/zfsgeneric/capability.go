package zfsgeneric

import (
	"fmt"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// Filesystem types a node may be asked for (democratic-csi's lists).
var (
	blockFSTypes = []string{"btrfs", "ext3", "ext4", "ext4dev", "xfs"}
	nfsFSTypes   = []string{"nfs"}
	smbFSTypes   = []string{"cifs"}
)

// checkCapability returns why c cannot be served by this driver, or "".
func (d *Driver) checkCapability(c *csi.VolumeCapability) string {
	if c == nil {
		return "a volume capability is empty"
	}
	if c.GetAccessMode() == nil {
		return "a volume capability has no access_mode"
	}
	mode := c.GetAccessMode().GetMode()
	if mode == csi.VolumeCapability_AccessMode_UNKNOWN {
		return "access mode UNKNOWN is not supported"
	}
	switch {
	case c.GetBlock() != nil:
		if d.cfg.kind == filesystem {
			return fmt.Sprintf("%s volumes are shared filesystems; block access is not supported (use zfs-generic-iscsi or zfs-generic-nvmeof)", d.cfg.driver)
		}
		return ""
	case c.GetMount() != nil:
		fs := c.GetMount().GetFsType()
		allowed := blockFSTypes
		switch d.cfg.driver {
		case DriverNFS:
			allowed = nfsFSTypes
		case DriverSMB:
			allowed = smbFSTypes
		}
		if fs != "" && !slices.Contains(allowed, fs) {
			return fmt.Sprintf("fs_type %q is not supported by %s (use one of %v, or leave it empty)", fs, d.cfg.driver, allowed)
		}
		if d.cfg.kind == volume && mode == csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER {
			return fmt.Sprintf("%s filesystems live on a block device that only one node may mount read-write; MULTI_NODE_MULTI_WRITER needs block access", d.cfg.driver)
		}
		return ""
	}
	return "a volume capability has no access type (mount or block)"
}

func (d *Driver) checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		if why := d.checkCapability(c); why != "" {
			return why
		}
	}
	return ""
}
