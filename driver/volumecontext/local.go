package volumecontext

import (
	"path/filepath"
	"strings"
)

// HostPath is node_attach_driver "hostpath": bind-mount a directory that
// exists on the node (local-hostpath).
type HostPath struct {
	Path string // absolute
}

// AttachDriver implements Attachment.
func (HostPath) AttachDriver() string { return DriverHostPath }

// Encode implements Attachment.
func (c HostPath) Encode() map[string]string {
	return map[string]string{KeyAttachDriver: DriverHostPath, KeyPath: c.Path}
}

// Decode reads path (required, absolute).
func (c *HostPath) Decode(vc map[string]string) error {
	c.Path = get(vc, KeyPath)
	switch {
	case c.Path == "":
		return missing(DriverHostPath, KeyPath, "", "the volume's directory on the node")
	case !filepath.IsAbs(c.Path):
		return invalid(DriverHostPath, KeyPath, c.Path, "must be an absolute path")
	}
	return nil
}

func (HostPath) keys() []string       { return []string{KeyPath} }
func (c *HostPath) value() Attachment { return *c }

// ZFSLocal is node_attach_driver "zfs-local": a dataset or zvol on the
// node (zfs-local-dataset, zfs-local-zvol).
type ZFSLocal struct {
	AssetName string // pool/path, no snapshot
}

// AttachDriver implements Attachment.
func (ZFSLocal) AttachDriver() string { return DriverZFSLocal }

// Encode implements Attachment.
func (c ZFSLocal) Encode() map[string]string {
	return map[string]string{KeyAttachDriver: DriverZFSLocal, KeyZFSAssetName: c.AssetName}
}

// Decode reads zfs_asset_name (required, a dataset or zvol name).
func (c *ZFSLocal) Decode(vc map[string]string) error {
	c.AssetName = get(vc, KeyZFSAssetName)
	n := c.AssetName
	switch {
	case n == "":
		return missing(DriverZFSLocal, KeyZFSAssetName, "", "")
	case strings.HasPrefix(n, "/") || strings.HasSuffix(n, "/") || strings.ContainsAny(n, "@#") || strings.Contains(n, ".."):
		return invalid(DriverZFSLocal, KeyZFSAssetName, n, "not a dataset or zvol name (pool/path, no snapshot)")
	}
	return nil
}

func (ZFSLocal) keys() []string       { return []string{KeyZFSAssetName} }
func (c *ZFSLocal) value() Attachment { return *c }
