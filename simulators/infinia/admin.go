package infinia

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Run-time administration for tests and the lab: what an Infinia
// administrator sets up before a CSI driver is pointed at it. Every
// change is persisted like a REST change.

// change runs fn on the tree and saves it; a failing fn or save leaves
// the tree as it was.
//
// An administrative change rewrites the snapshot (see journal.go): such
// changes are few, and a journal line for each kind would be more code
// than the cost saved. Its rollback point is the tree encoded before it.
func (s *Server) change(fn func(st *state) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	saved, err := json.Marshal(s.st)
	if err != nil {
		return fmt.Errorf("infinia: encoding the state: %w", err)
	}
	if err := fn(s.st); err != nil {
		s.restore(saved)
		return err
	}
	if err := s.compact(); err != nil {
		s.restore(saved)
		return err
	}
	return nil
}

func (s *Server) restore(saved []byte) {
	if st, err := decodeState(saved); err == nil {
		s.st = st
	}
}

// AddAccount adds a service account; its Level must exist.
func (s *Server) AddAccount(a Account) error {
	return s.change(func(st *state) error { return st.addAccount(a) })
}

// Accounts lists the accounts (with their passwords: this is a lab).
func (s *Server) Accounts() []Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Accounts)
}

// AddCluster adds a cluster with its instances and tenants.
func (s *Server) AddCluster(c ClusterSeed) error {
	return s.change(func(st *state) error { return st.addCluster(c) })
}

// AddTenant adds a tenant (and its subtenants) to a cluster.
func (s *Server) AddTenant(cluster string, t TenantSeed) error {
	return s.change(func(st *state) error { return st.addTenant(cluster, t) })
}

// AddSubtenant adds a subtenant (and its services) to cluster/tenant.
func (s *Server) AddSubtenant(cluster, tenant string, sub SubtenantSeed) error {
	return s.change(func(st *state) error { return st.addSubtenant(cluster, tenant, sub) })
}

// AddService adds a block service (and its dataset) to a subtenant.
func (s *Server) AddService(cluster, tenant, subtenant string, sv ServiceSeed) error {
	return s.change(func(st *state) error { return st.addService(cluster, tenant, subtenant, sv) })
}

// SetQuota sets a bulk_quota in bytes (0 = unlimited) by path: "c/t"
// (tenant), "c/t/s" (subtenant), "c/t/s/dataset"; "c" sets the cluster's
// capacity. Volumes already bigger than a new quota stay; only growth is
// refused (507).
func (s *Server) SetQuota(path string, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("infinia: quota of %s must not be negative", path)
	}
	return s.change(func(st *state) error {
		p := strings.Split(path, "/")
		notFound := fmt.Errorf("infinia: SetQuota: %q names no cluster, tenant, subtenant or dataset", path)
		switch len(p) {
		case 1:
			if cl := st.Clusters[p[0]]; cl != nil {
				cl.Capacity = bytes
				return nil
			}
		case 2:
			if tn := st.tenant(p[0], p[1]); tn != nil {
				tn.Quota = bytes
				return nil
			}
		case 3:
			if sub := st.subtenant(p[0], p[1], p[2]); sub != nil {
				sub.Quota = bytes
				return nil
			}
		case 4:
			if sub := st.subtenant(p[0], p[1], p[2]); sub != nil && sub.Datasets[p[3]] != nil {
				sub.Datasets[p[3]].Quota = bytes
				return nil
			}
		}
		return notFound
	})
}

// SetInstances replaces a cluster's instances (e.g. to point data_ip at a
// storage VM). Existing listeners of a removed instance disappear from
// answers; a Target sees the new addresses at each subsystem's next
// change.
func (s *Server) SetInstances(cluster string, in []Instance) error {
	return s.change(func(st *state) error {
		cl := st.Clusters[cluster]
		if cl == nil {
			return fmt.Errorf("infinia: cluster %s not found", cluster)
		}
		if err := cl.setInstances(in); err != nil {
			return fmt.Errorf("infinia: cluster %s: %w", cluster, err)
		}
		return nil
	})
}
