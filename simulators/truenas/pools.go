package truenas

import (
	"fmt"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// mountUnderMnt gives every pool whose mountpoint is still the default
// (/<pool>) the mountpoint /mnt/<pool>: TrueNAS imports pools with
// altroot=/mnt, so its datasets live under /mnt (what share paths, the API's
// mountpoints and zfs over SSH all show).
func mountUnderMnt(m *zfsmodel.Model) error {
	for _, p := range m.Pools() {
		v, err := m.GetProperty(p.Name, "mountpoint", true)
		if err != nil {
			return fmt.Errorf("truenas: pool %s: %w", p.Name, err)
		}
		if v.Source != zfsmodel.SourceDefault {
			continue
		}
		if err := m.SetProperty(p.Name, "mountpoint", "/mnt/"+p.Name); err != nil {
			return fmt.Errorf("truenas: pool %s: mountpoint: %w", p.Name, err)
		}
		// What pool.create sets on a new pool's root dataset
		// (plugins/pool_/pool.py): POSIX ACLs, which every dataset
		// inherits unless its share_type says otherwise.
		for _, kv := range [][2]string{{"acltype", "posix"}, {"aclmode", "discard"}} {
			if err := m.SetProperty(p.Name, kv[0], kv[1]); err != nil {
				return fmt.Errorf("truenas: pool %s: %s: %w", p.Name, kv[0], err)
			}
		}
	}
	return nil
}
