package truenas

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// PoolHealth is the engine's PoolHealth for the freenas-api-* drivers:
// pool.query's status (ONLINE, DEGRADED, ...) and allocated/size, the
// numbers `zpool list` prints as health and capacity.
func (p *apiPlatform) PoolHealth(ctx context.Context, pool string) (string, int, error) {
	var rows []struct {
		Status    string `json:"status"`
		Size      int64  `json:"size"`
		Allocated int64  `json:"allocated"`
	}
	if err := p.call(ctx, &rows, "pool.query", [][]any{{"name", "=", pool}}); err != nil {
		return "", 0, fmt.Errorf("pool.query: %w", err)
	}
	if len(rows) == 0 {
		return "", 0, fmt.Errorf("pool.query: no pool %s", pool)
	}
	r := rows[0]
	capacity := 0
	if r.Size > 0 {
		capacity = int(r.Allocated * 100 / r.Size)
	}
	return r.Status, capacity, nil
}

// CheckShare (engine.ShareChecker) for NFS: the sharing.nfs entry recorded
// on the dataset must still exist and export the dataset's mountpoint.
func (n *nfsShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	return checkPathObject(ctx, n.t, "sharing.nfs", "NFS share", dataset, props, propNFSShareID)
}

// CheckShare for SMB, likewise with sharing.smb.
func (m *smbShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	return checkPathObject(ctx, m.t, "sharing.smb", "SMB share", dataset, props, propSMBShareID)
}

// CheckShare for iSCSI: the target and the extent recorded on the zvol.
func (i *iscsiShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	return checkObjects(ctx, i.t, dataset, props, []recorded{{"iscsi.target", "iSCSI target", propISCSITargetID}, {"iscsi.extent", "iSCSI extent (LUN)", propISCSIExtentID}})
}

// CheckShare for NVMe-oF: the subsystem recorded on the zvol.
func (n *nvmeofShare) CheckShare(ctx context.Context, dataset string, props zfs.Properties) (string, error) {
	return checkObjects(ctx, n.t, dataset, props, []recorded{{"nvmet.subsys", "NVMe-oF subsystem", propNVMeSubsysID}})
}

type recorded struct{ ns, what, prop string }

func checkObjects(ctx context.Context, t *truenas, dataset string, props zfs.Properties, objs []recorded) (string, error) {
	var missing []string
	for _, o := range objs {
		id := storedID(props, o.prop)
		if id == 0 {
			missing = append(missing, fmt.Sprintf("no %s is recorded on %s", o.what, dataset))
			continue
		}
		if _, ok, err := t.getObject(ctx, o.ns, id); err != nil {
			return "", err
		} else if !ok {
			missing = append(missing, fmt.Sprintf("%s %d of %s is missing (%s)", o.what, id, dataset, o.ns))
		}
	}
	return strings.Join(missing, "; "), nil
}

func checkPathObject(ctx context.Context, t *truenas, ns, what, dataset string, props zfs.Properties, prop string) (string, error) {
	id := storedID(props, prop)
	if id == 0 {
		return fmt.Sprintf("no %s is recorded on %s", what, dataset), nil
	}
	o, ok, err := t.getObject(ctx, ns, id)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return fmt.Sprintf("%s %d of %s is missing (%s)", what, id, dataset, ns), nil
	case o.Path != props["mountpoint"].Value:
		return fmt.Sprintf("%s %d no longer exports %s (it exports %s)", what, id, props["mountpoint"].Value, o.Path), nil
	}
	return "", nil
}
