package infinia

import "sort"

// Inventory is every volume and subsystem the simulator holds, read
// in-process (a leak checker compares it with what a client believes
// exists, without going through the client).
type Inventory struct {
	Volumes    []InventoryVolume
	Subsystems []InventorySubsystem
}

// InventoryVolume is one volume: where it lives and the subsystem whose
// namespace it is ("" when none).
type InventoryVolume struct {
	Cluster, Tenant, Subtenant, Dataset, Name string
	UUID                                      string
	Size                                      int64
	Subsystem                                 string
}

// InventorySubsystem is one subsystem with its host grants and its
// namespaces' volumes ("<dataset>/<volume>").
type InventorySubsystem struct {
	Cluster, Tenant, Subtenant, Name string
	Hosts                            []string
	Volumes                          []string
}

// Inventory lists the tree, sorted.
func (s *Server) Inventory() Inventory {
	s.mu.Lock()
	defer s.mu.Unlock()
	var inv Inventory
	for _, cn := range sortedKeys(s.st.Clusters) {
		c := s.st.Clusters[cn]
		for _, tn := range sortedKeys(c.Tenants) {
			t := c.Tenants[tn]
			for _, sn := range sortedKeys(t.Subtenants) {
				sub := t.Subtenants[sn]
				for _, dn := range sortedKeys(sub.Datasets) {
					for _, vn := range sortedKeys(sub.Datasets[dn].Volumes) {
						v := sub.Datasets[dn].Volumes[vn]
						inv.Volumes = append(inv.Volumes, InventoryVolume{Cluster: cn, Tenant: tn, Subtenant: sn, Dataset: dn,
							Name: v.Name, UUID: v.UUID, Size: v.size(), Subsystem: v.Subsystem})
					}
				}
				for _, name := range sortedKeys(sub.Subsystems) {
					ss := sub.Subsystems[name]
					is := InventorySubsystem{Cluster: cn, Tenant: tn, Subtenant: sn, Name: name, Hosts: append([]string(nil), ss.Hosts...)}
					for _, ns := range ss.Namespaces {
						is.Volumes = append(is.Volumes, ns.Dataset+"/"+ns.Volume)
					}
					sort.Strings(is.Volumes)
					inv.Subsystems = append(inv.Subsystems, is)
				}
			}
		}
	}
	return inv
}
