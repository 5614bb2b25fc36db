package sharing

import (
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// datasetDeleted is pool.dataset.delete's attachment cleanup (the
// FSAttachmentDelegates of nfs, smb, iscsi and nvmet): shares of the
// dataset's mountpoint or below, DISK extents on its zvol (with their LUN
// mappings, and targets left without LUNs) and namespaces on it go.
func (s *Service) datasetDeleted(c *middleware.Call, ds string) error {
	mountpoint := "/mnt/" + ds
	// PeekProps: the mountpoint is all this reads; measuring the dataset
	// and reading its ~80 properties was 3 % of the simulator's CPU per
	// create + delete pair (issue 16, seventh round).
	if info, err := s.model.PeekProps(ds); err == nil && info.Mountpoint != "" {
		mountpoint = info.Mountpoint
	}
	zvol := "zvol/" + ds
	// The tables keep their paths cleaned (store.go): clean is
	// path.Clean of the row's path, "." for an absent or empty one.
	onDataset := func(clean string) bool { return clean != "." && (under(clean, mountpoint) || under(clean, zvol)) }

	err := s.dropAttachments(ds, onDataset)
	// the changes are in their files before the dataset delete answers
	if perr := s.persist(); err == nil {
		err = perr
	}
	return err
}

// under reports whether the cleaned path clean is root or below it.
func under(clean, root string) bool {
	return clean == root || len(clean) > len(root) && clean[len(root)] == '/' && strings.HasPrefix(clean, root)
}

// dropAttachments removes what datasetDeleted names from the tables.
func (s *Service) dropAttachments(ds string, onDataset func(clean string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := map[string]bool{}
	dropRows := func(ns string, gone []middleware.Row) []middleware.Row {
		for _, r := range gone {
			s.t[ns].remove(intOf(r["id"]))
			changed[ns] = true
			s.log.Info("removed with its dataset", "namespace", ns, "id", r["id"], "dataset", ds)
		}
		return gone
	}
	drop := func(ns string, match func(middleware.Row) bool) []middleware.Row {
		return dropRows(ns, s.t[ns].find(match))
	}
	dropPath := func(ns string, match func(clean string, r middleware.Row) bool) []middleware.Row {
		return dropRows(ns, s.t[ns].findPath(match))
	}
	onlyPath := func(clean string, _ middleware.Row) bool { return onDataset(clean) }
	dropPath(nsNFS, onlyPath)
	dropPath(nsSMB, onlyPath)

	orphans := map[int]bool{} // targets that lost a LUN
	for _, e := range dropPath(nsExtent, func(clean string, r middleware.Row) bool { return onDataset(clean) && strOf(r["type"]) == "DISK" }) {
		for _, te := range drop(nsTargetExt, func(r middleware.Row) bool { return intOf(r["extent"]) == intOf(e["id"]) }) {
			orphans[intOf(te["target"])] = true
		}
	}
	for _, te := range s.t[nsTargetExt].rows {
		delete(orphans, intOf(te["target"]))
	}
	for _, t := range drop(nsTarget, func(r middleware.Row) bool { return orphans[intOf(r["id"])] }) {
		delete(s.inUse, strOf(t["name"]))
	}

	// the snapshot tasks' attachment delegate: tasks on the dataset or below
	dropPath(nsSnapTask, func(clean string, _ middleware.Row) bool { return under(clean, ds) })
	if s.nvmet() {
		dropPath(nsNamespace, onlyPath)
	}
	for ns := range changed {
		if err := s.commit(ns); err != nil {
			return err
		}
	}
	return nil
}
