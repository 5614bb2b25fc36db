package engine

import (
	"fmt"
	"slices"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// Filesystem types a node may be asked for (democratic-csi's lists): a
// backend passes the one of its protocol as Options.FSTypes.
var (
	BlockFSTypes = []string{"btrfs", "ext3", "ext4", "ext4dev", "xfs"}
	NFSFSTypes   = []string{"nfs"}
	SMBFSTypes   = []string{"cifs"}
)

// checkCapability returns why c cannot be served by this driver, or "".
func (e *Engine) checkCapability(c *csi.VolumeCapability) string {
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
		if e.cfg.kind == filesystem {
			return fmt.Sprintf("%s volumes are shared filesystems; block access is not supported (use zfs-generic-iscsi or zfs-generic-nvmeof)", e.cfg.driver)
		}
		return ""
	case c.GetMount() != nil:
		fs := c.GetMount().GetFsType()
		allowed := e.fsTypes
		if fs != "" && !slices.Contains(allowed, fs) {
			return fmt.Sprintf("fs_type %q is not supported by %s (use one of %v, or leave it empty)", fs, e.cfg.driver, allowed)
		}
		if e.cfg.kind == volume && mode == csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER {
			return fmt.Sprintf("%s filesystems live on a block device that only one node may mount read-write; MULTI_NODE_MULTI_WRITER needs block access", e.cfg.driver)
		}
		return ""
	}
	return "a volume capability has no access type (mount or block)"
}

func (e *Engine) checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "volume_capabilities is required"
	}
	for _, c := range caps {
		if why := e.checkCapability(c); why != "" {
			return why
		}
	}
	return ""
}
