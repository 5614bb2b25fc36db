package synology

import "slices"

// Inventory is a read-only summary of what the simulated NAS holds, for
// the demo and tests that want to show or check the NAS's side without
// going through the Web API (whose answers the driver under test reads).
type Inventory struct {
	LUNs      []InventoryLUN
	Snapshots []string // LUN snapshot names
	Targets   []string // target IQNs
	Shares    []string // shared folder names
}

// InventoryLUN is one LUN of an Inventory.
type InventoryLUN struct {
	Name     string
	Size     int64
	Deleting bool     // deleted, DSM still removing it in the background
	Targets  []string // IQNs of the targets it is mapped into
}

// Empty reports whether the NAS holds no LUN, snapshot, target or share
// (LUNs still being deleted count: they are not gone yet).
func (inv Inventory) Empty() bool {
	return len(inv.LUNs)+len(inv.Snapshots)+len(inv.Targets)+len(inv.Shares) == 0
}

// Inventory summarises the NAS's LUNs, snapshots, targets and shares now.
func (s *Server) Inventory() Inventory {
	defer s.flush() // after the unlock below: reaping commits
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked() // LUNs whose background deletion is over are gone
	var inv Inventory
	for _, l := range s.st.LUNs {
		il := InventoryLUN{Name: l.Name, Size: l.Size, Deleting: l.DeleteAt != 0}
		for _, t := range s.st.Targets {
			if slices.ContainsFunc(t.Mapped, func(m mapping) bool { return m.LunUUID == l.UUID }) {
				il.Targets = append(il.Targets, t.IQN)
			}
		}
		inv.LUNs = append(inv.LUNs, il)
	}
	for _, sn := range s.st.Snapshots {
		inv.Snapshots = append(inv.Snapshots, sn.Name)
	}
	for _, t := range s.st.Targets {
		inv.Targets = append(inv.Targets, t.IQN)
	}
	for _, sh := range s.st.Shares {
		inv.Shares = append(inv.Shares, sh.Name)
	}
	return inv
}
