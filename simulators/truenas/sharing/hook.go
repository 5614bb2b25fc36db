package sharing

import (
	"path"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// datasetDeleted is pool.dataset.delete's attachment cleanup (the
// FSAttachmentDelegates of nfs, smb, iscsi and nvmet): shares of the
// dataset's mountpoint or below, DISK extents on its zvol (with their LUN
// mappings, and targets left without LUNs) and namespaces on it go.
func (s *Service) datasetDeleted(c *middleware.Call, ds string) error {
	mountpoint := "/mnt/" + ds
	if info, err := s.model.Get(ds); err == nil && info.Mountpoint != "" {
		mountpoint = info.Mountpoint
	}
	zvol := "zvol/" + ds
	under := func(p, root string) bool {
		p = path.Clean(p)
		return p == root || strings.HasPrefix(p, root+"/")
	}
	onDataset := func(p string) bool { return p != "" && (under(p, mountpoint) || under(p, zvol)) }

	err := s.dropAttachments(ds, onDataset, under)
	// the changes are in their files before the dataset delete answers
	if perr := s.persist(); err == nil {
		err = perr
	}
	return err
}

// dropAttachments removes what datasetDeleted names from the tables.
func (s *Service) dropAttachments(ds string, onDataset func(string) bool, under func(p, root string) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := map[string]bool{}
	drop := func(ns string, match func(middleware.Row) bool) []middleware.Row {
		gone := s.t[ns].find(match)
		for _, r := range gone {
			s.t[ns].remove(intOf(r["id"]))
			changed[ns] = true
			s.log.Info("removed with its dataset", "namespace", ns, "id", r["id"], "dataset", ds)
		}
		return gone
	}
	drop(nsNFS, func(r middleware.Row) bool { return onDataset(strOf(r["path"])) })
	drop(nsSMB, func(r middleware.Row) bool { return onDataset(strOf(r["path"])) })

	orphans := map[int]bool{} // targets that lost a LUN
	for _, e := range drop(nsExtent, func(r middleware.Row) bool { return strOf(r["type"]) == "DISK" && onDataset(strOf(r["path"])) }) {
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
	drop(nsSnapTask, func(r middleware.Row) bool { return under(strOf(r["dataset"]), ds) })
	if s.nvmet() {
		drop(nsNamespace, func(r middleware.Row) bool { return onDataset(strOf(r["device_path"])) })
	}
	for ns := range changed {
		if err := s.commit(ns); err != nil {
			return err
		}
	}
	return nil
}
