package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// Kinds of what the CO believes exists.
const (
	kindVolume   = "volume"
	kindSnapshot = "snapshot"
	kindGrant    = "grant" // a ControllerPublishVolume not yet undone
)

// belief is what the CO believes exists: volumes and snapshots it got an
// id for and has not deleted, and publications it has not undone.
type belief struct {
	mu sync.Mutex
	m  map[string]string // "<conn> <kind> <name>" -> id
}

func newBelief() *belief { return &belief{m: map[string]string{}} }

func key(conn, kind, name string) string { return conn + " " + kind + " " + name }

func (b *belief) add(conn, kind, name, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key(conn, kind, name)] = id
}

func (b *belief) remove(conn, kind, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key(conn, kind, name))
}

// expected are the backend objects each believed object stands for, as
// "<conn> <object kind> <csi name>".
func (b *belief) expected() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for k := range b.m {
		f := strings.SplitN(k, " ", 3)
		cn, kind, name := connByName(f[0]), f[1], f[2]
		for _, obj := range objectsOf(cn, kind) {
			out[key(cn.Name, obj, name)] = true
		}
	}
	return out
}

// objectsOf lists the objects one believed thing is made of on its host.
func objectsOf(cn conn, kind string) []string {
	switch kind {
	case kindSnapshot:
		if cn.Sim == "" {
			return []string{"snapshot-dir", "snapshot-metadata"}
		}
		return []string{"zfs-snapshot"}
	case kindGrant:
		return []string{"nvme-host-grant"}
	}
	switch {
	case cn.Sim == "":
		return []string{"volume-dir", "volume-metadata"}
	case cn.Sim == simInfinia:
		return []string{"infinia-volume", "nvme-subsystem"}
	case strings.HasSuffix(cn.Driver, "-nfs") && cn.Sim == simTrueNAS:
		return []string{"zfs-dataset", "nfs-share"}
	case strings.HasSuffix(cn.Driver, "-nfs"):
		return []string{"zfs-dataset"} // the share is the dataset's sharenfs
	case strings.HasSuffix(cn.Driver, "-iscsi") && cn.Sim == simTrueNAS:
		return []string{"zvol", "iscsi-extent", "iscsi-target", "iscsi-targetextent"}
	case strings.HasSuffix(cn.Driver, "-iscsi"):
		return []string{"zvol", "iscsi-backstore", "iscsi-target"}
	case strings.HasSuffix(cn.Driver, "-nvmeof"):
		return []string{"zvol", "nvme-subsystem", "nvme-namespace", "nvme-port-link"}
	}
	return nil
}

// inventory is what the hosts hold, as "<conn> <object kind> <csi name>"
// (with a description each); objects that belong to no connection are
// keyed by what they are.
type inventory map[string][]string

func (inv inventory) add(k, desc string) { inv[k] = append(inv[k], desc) }

// checkLeaks lists every object on every host through the simulators'
// in-process state (not the driver) and compares it with the belief:
// leaked are on a host but not believed (or there twice), lost are
// believed but not on their host.
func checkLeaks(h *hosts, dir string, b *belief) (leaked, lost []string) {
	h.mu.Lock()
	inv := inventory{}
	zfsObjects(inv, h.zfs.Model, "zg-", "zfs-ssh")
	zfsObjects(inv, h.tn.Server.Model(), "tn-", "truenas")
	zfsSSHShares(inv, h)
	truenasShares(inv, h)
	infiniaObjects(inv, h)
	h.mu.Unlock()
	hostpathObjects(inv, hostpathDir(dir))

	want := b.expected()
	for k, descs := range inv {
		if !want[k] {
			for _, d := range descs {
				leaked = append(leaked, k+" ("+d+")")
			}
			continue
		}
		for _, d := range descs[1:] {
			leaked = append(leaked, k+" (a second one: "+d+")")
		}
	}
	for k := range want {
		if len(inv[k]) == 0 {
			lost = append(lost, k)
		}
	}
	sort.Strings(leaked)
	sort.Strings(lost)
	return leaked, lost
}

const parent = "tank/k8s"

// owner splits "<pool>/k8s/<conn>/<name>[@snap]" (a dataset, a zvol
// path "zvol/…", "/dev/zvol/…" or "/mnt/…") into the connection and the
// volume name; ok is false for anything else.
func owner(path string) (conn, name, snap string, ok bool) {
	for _, p := range []string{"/dev/zvol/", "zvol/", "/mnt/"} {
		path = strings.TrimPrefix(path, p)
	}
	rest, found := strings.CutPrefix(path, parent+"/")
	if !found {
		return "", "", "", false
	}
	conn, name, found = strings.Cut(rest, "/")
	if !found || name == "" || strings.Contains(name, "/") {
		return "", "", "", false
	}
	name, snap, _ = strings.Cut(name, "@")
	return conn, name, snap, true
}

func zfsObjects(inv inventory, m *zfsmodel.Model, prefix, host string) {
	if !m.Exists(parent) {
		return // nothing was ever made on this host
	}
	names, err := m.List(parent, true, zfsmodel.AnyType)
	if err != nil {
		inv.add(host+" error", fmt.Sprintf("listing %s: %v", parent, err))
		return
	}
	for _, n := range names {
		if n == parent {
			continue
		}
		rest := strings.TrimPrefix(n, parent+"/")
		if !strings.Contains(rest, "/") && !strings.Contains(rest, "@") && strings.HasPrefix(rest, prefix) {
			continue // a connection's parent dataset (or its -snapshots)
		}
		conn, name, snap, ok := owner(n)
		if !ok {
			inv.add(host+" unknown "+n, "dataset")
			continue
		}
		switch info, _ := m.Get(n); {
		case snap != "":
			inv.add(key(conn, "zfs-snapshot", snap), host+" "+n)
		case info != nil && info.Type == zfsmodel.Volume:
			inv.add(key(conn, "zvol", name), host+" "+n)
		default:
			inv.add(key(conn, "zfs-dataset", name), host+" "+n)
		}
	}
}

// zfsSSHShares: the LIO backstores and targets and the NVMe-oF subsystems
// of the ZFS-over-SSH host.
func zfsSSHShares(inv inventory, h *hosts) {
	lio := h.zfs.Server.LIO()
	soOwner := map[string]string{} // "/backstores/<plugin>/<name>" -> "<conn> <name>"
	for _, so := range lio.StorageObjects {
		conn, name, _, ok := owner(so.Dev)
		if !ok {
			inv.add("zfs-ssh unknown backstore "+so.Name, so.Dev)
			continue
		}
		soOwner["/backstores/"+so.Plugin+"/"+so.Name] = conn + " " + name
		inv.add(key(conn, "iscsi-backstore", name), "zfs-ssh backstore "+so.Name)
	}
	for _, t := range lio.Targets {
		var owners []string
		for _, tpg := range t.TPGs {
			for _, l := range tpg.LUNs {
				owners = append(owners, soOwner[l.StorageObject])
			}
		}
		if len(owners) != 1 || owners[0] == "" {
			inv.add("zfs-ssh target "+t.WWN, fmt.Sprintf("LUN backstores %v", owners))
			continue
		}
		conn, name, _ := strings.Cut(owners[0], " ")
		inv.add(key(conn, "iscsi-target", name), "zfs-ssh target "+t.WWN)
	}
	nv := h.zfs.Server.NVMet()
	subOwner := map[string]string{}
	for _, s := range nv.Subsystems {
		var owners []string
		for _, ns := range s.Namespaces {
			conn, name, _, ok := owner(ns.Path)
			if !ok {
				inv.add("zfs-ssh namespace "+s.NQN, ns.Path)
				continue
			}
			owners = append(owners, conn+" "+name)
			inv.add(key(conn, "nvme-namespace", name), fmt.Sprintf("zfs-ssh %s nsid %d", s.NQN, ns.NSID))
		}
		if len(owners) != 1 {
			inv.add("zfs-ssh subsystem "+s.NQN, fmt.Sprintf("namespaces of %v", owners))
			continue
		}
		subOwner[s.NQN] = owners[0]
		conn, name, _ := strings.Cut(owners[0], " ")
		inv.add(key(conn, "nvme-subsystem", name), "zfs-ssh subsystem "+s.NQN)
		if len(s.AllowedHosts) > 0 {
			inv.add(key(conn, "nvme-host-grant", name), fmt.Sprintf("zfs-ssh %s hosts %v", s.NQN, s.AllowedHosts))
		}
	}
	for _, p := range nv.Ports {
		for _, nqn := range p.Subsystems {
			o, ok := subOwner[nqn]
			if !ok {
				inv.add("zfs-ssh port link "+nqn, fmt.Sprintf("port %d", p.ID))
				continue
			}
			conn, name, _ := strings.Cut(o, " ")
			inv.add(key(conn, "nvme-port-link", name), fmt.Sprintf("zfs-ssh port %d %s", p.ID, nqn))
		}
	}
}

// truenasShares: the TrueNAS services' NFS shares, iSCSI targets,
// extents and their links, NVMe-oF subsystems, namespaces, port links and
// host grants.
func truenasShares(inv inventory, h *hosts) {
	st := h.tn.Server.Sharing().State()
	for _, s := range st.NFSShares {
		if conn, name, _, ok := owner(s.Path); ok {
			inv.add(key(conn, "nfs-share", name), fmt.Sprintf("truenas nfs share %d %s", s.ID, s.Path))
		} else {
			inv.add(fmt.Sprintf("truenas nfs share %d", s.ID), s.Path)
		}
	}
	extOwner := map[int]string{}
	for _, e := range st.ISCSIExtents {
		if conn, name, _, ok := owner(e.Path); ok {
			extOwner[e.ID] = conn + " " + name
			inv.add(key(conn, "iscsi-extent", name), fmt.Sprintf("truenas extent %d %s", e.ID, e.Path))
		} else {
			inv.add(fmt.Sprintf("truenas extent %d", e.ID), e.Path)
		}
	}
	targetOwners := map[int][]string{}
	for _, te := range st.ISCSITargetExtents {
		o, ok := extOwner[te.Extent]
		if !ok {
			inv.add(fmt.Sprintf("truenas targetextent %d", te.ID), fmt.Sprintf("extent %d is gone", te.Extent))
			continue
		}
		targetOwners[te.Target] = append(targetOwners[te.Target], o)
		conn, name, _ := strings.Cut(o, " ")
		inv.add(key(conn, "iscsi-targetextent", name), fmt.Sprintf("truenas targetextent %d", te.ID))
	}
	for _, t := range st.ISCSITargets {
		os := targetOwners[t.ID]
		if len(os) != 1 {
			inv.add(fmt.Sprintf("truenas target %d %s", t.ID, t.Name), fmt.Sprintf("extents of %v", os))
			continue
		}
		conn, name, _ := strings.Cut(os[0], " ")
		inv.add(key(conn, "iscsi-target", name), fmt.Sprintf("truenas target %d %s", t.ID, t.Name))
	}
	subOwners := map[int][]string{}
	for _, ns := range st.NVMetNamespaces {
		if conn, name, _, ok := owner(ns.DevicePath); ok {
			subOwners[ns.SubsysID] = append(subOwners[ns.SubsysID], conn+" "+name)
			inv.add(key(conn, "nvme-namespace", name), fmt.Sprintf("truenas namespace %d %s", ns.ID, ns.DevicePath))
		} else {
			inv.add(fmt.Sprintf("truenas namespace %d", ns.ID), ns.DevicePath)
		}
	}
	subOwner := map[int]string{}
	for _, s := range st.NVMetSubsystems {
		os := subOwners[s.ID]
		if len(os) != 1 {
			inv.add(fmt.Sprintf("truenas subsystem %d %s", s.ID, s.Name), fmt.Sprintf("namespaces of %v", os))
			continue
		}
		subOwner[s.ID] = os[0]
		conn, name, _ := strings.Cut(os[0], " ")
		inv.add(key(conn, "nvme-subsystem", name), fmt.Sprintf("truenas subsystem %d %s", s.ID, s.Name))
	}
	for _, ps := range st.NVMetPortSubsys {
		o, ok := subOwner[ps.SubsysID]
		if !ok {
			inv.add(fmt.Sprintf("truenas port_subsys %d", ps.ID), fmt.Sprintf("subsystem %d", ps.SubsysID))
			continue
		}
		conn, name, _ := strings.Cut(o, " ")
		inv.add(key(conn, "nvme-port-link", name), fmt.Sprintf("truenas port_subsys %d", ps.ID))
	}
	for _, hs := range st.NVMetHostSubsys {
		if o, ok := subOwner[hs.SubsysID]; ok {
			conn, name, _ := strings.Cut(o, " ")
			inv.add(key(conn, "nvme-host-grant", name), fmt.Sprintf("truenas host_subsys %d", hs.ID))
		} else {
			inv.add(fmt.Sprintf("truenas host_subsys %d", hs.ID), fmt.Sprintf("subsystem %d", hs.SubsysID))
		}
	}
}

// infiniaObjects: Infinia's volumes, subsystems and host grants. Every
// Infinia volume belongs to the one infinia connection.
func infiniaObjects(inv inventory, h *hosts) {
	const cn = "infinia"
	it := h.inf.Server.Inventory()
	for _, v := range it.Volumes {
		inv.add(key(cn, "infinia-volume", v.Name), fmt.Sprintf("infinia volume %s/%s uuid %s", v.Dataset, v.Name, v.UUID))
	}
	for _, s := range it.Subsystems {
		if len(s.Volumes) != 1 {
			inv.add("infinia subsystem "+s.Name, fmt.Sprintf("volumes %v", s.Volumes))
			continue
		}
		_, name, _ := strings.Cut(s.Volumes[0], "/")
		inv.add(key(cn, "nvme-subsystem", name), "infinia subsystem "+s.Name)
		for _, host := range s.Hosts {
			inv.add(key(cn, "nvme-host-grant", name), fmt.Sprintf("infinia subsystem %s host %s", s.Name, host))
		}
	}
}

// hostpathObjects: local-hostpath's volume and snapshot directories and
// their metadata files, and anything half made or half removed.
func hostpathObjects(inv inventory, base string) {
	const cn = "hostpath"
	for _, d := range []struct{ dir, kind string }{
		{"v", "volume-dir"}, {"s", "snapshot-dir"},
		{".switchyard/volumes", "volume-metadata"}, {".switchyard/snapshots", "snapshot-metadata"},
	} {
		entries, err := os.ReadDir(filepath.Join(base, d.dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := strings.TrimSuffix(e.Name(), ".json")
			if strings.HasPrefix(e.Name(), ".") {
				inv.add("hostpath leftover "+filepath.Join(d.dir, e.Name()), "a half-made or half-removed object")
				continue
			}
			inv.add(key(cn, d.kind, name), filepath.Join(base, d.dir, e.Name()))
		}
	}
}

// checkLost is checkLeaks' lost half alone.
func checkLost(h *hosts, dir string, b *belief) []string {
	_, lost := checkLeaks(h, dir, b)
	return lost
}
