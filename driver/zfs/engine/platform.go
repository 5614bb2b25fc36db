package engine

import (
	"context"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// Platform is what differs between the ZFS hosts the engine drives.
// zfs-generic-* and the freenas-* SSH drivers run the zfs command line
// (CLIHost); the freenas-api-* drivers use the TrueNAS API. Everything else
// (ids, user properties, volume_context, snapshots, clones, listing,
// resuming half-made volumes) is the engine's, so volumes move between
// them.
type Platform interface {
	// Datasets reads and changes datasets, zvols and snapshots.
	Datasets() zfs.Datasets
	// Sharer makes volumes reachable by nodes.
	Sharer() Sharer
	// MaxZvolName is the longest "zvol/<dataset>" device name the host
	// allows, and how to name the host in the error.
	MaxZvolName(ctx context.Context) (limit int, host string, err error)
	// MinQuota is the smallest refquota the platform accepts (TrueNAS's
	// API: 1 GiB); smaller filesystem volumes are made this large. 0: no
	// minimum.
	MinQuota() int64
	// SetPermissions applies zfs.datasetPermissions* (never all empty) to
	// a new filesystem's mountpoint.
	SetPermissions(ctx context.Context, mountpoint string, p Permissions) error
	// Close releases the connections.
	Close() error
}

// Sharer makes a volume reachable by nodes and undoes it.
type Sharer interface {
	// Create shares the volume and returns its volume_context and the
	// properties to record with it (set together with the context).
	Create(ctx context.Context, r ShareRequest) (map[string]string, []zfs.Prop, error)
	// Remove undoes Create; it succeeds when there is nothing to remove.
	// props holds what was read of the dataset (at least AssetProps).
	Remove(ctx context.Context, dataset string, props zfs.Properties) error
	// AssetProps are the properties Remove needs (ids and names recorded
	// by Create).
	AssetProps() []string
}

// ShareRequest is one volume to share.
type ShareRequest struct {
	ID, Dataset, Name string
	Params            map[string]string
	Mountpoint        string // filesystems
}

// Permissions are the zfs.datasetPermissions* keys.
type Permissions struct {
	Mode, User, Group string
	ACLs              []string
	ACLBinary         string
}

// IsZero reports whether no permission key is set.
func (p Permissions) IsZero() bool {
	return p.Mode == "" && p.User == "" && p.Group == "" && len(p.ACLs) == 0
}
