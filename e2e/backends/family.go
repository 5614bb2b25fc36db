package backends

import (
	"context"
	"fmt"
	"sort"
)

// Env is what rows render against: the lab and the local-hostpath paths.
type Env struct {
	Lab *Lab
	// HostPathBase is local-hostpath's base as the driver sees it;
	// HostPathHostBase the same folder as this process sees it.
	HostPathBase     string
	HostPathHostBase string
}

// Family is one backend family's row.
type Family struct {
	// Name is the connection file's driver type; it is also the spec
	// label that selects the row (--label-filter=zfs-generic-nfs).
	Name string
	// Short goes into connection names: e2e-<Short>.
	Short string
	// Filesystem and Block say which volumeModes the family serves.
	Filesystem, Block bool
	// FSType is the StorageClass's csi.storage.k8s.io/fstype for
	// filesystem volumes on block storage ("" for shares).
	FSType string
	// ExpandVisible: after an online expansion the pod sees the new
	// size. local-hostpath records the size only (a directory has none),
	// and the lab's simulated datasets are plain directories in the VM
	// (their refquota is recorded, not enforced by a kernel), so NFS and
	// SMB pods see the VM's disk; block volumes grow for real.
	ExpandVisible bool
	// StorageSize, when set, reads a volume's size on the storage system
	// (id is the backend volume id): an expansion that the pod cannot
	// see is checked there.
	StorageSize func(ctx context.Context, e *Env, conn, id string) (int64, error)
	// Snapshots: the family offers VolumeSnapshots (and restores).
	Snapshots bool
	// MaxIDLen is the longest volume or snapshot id the backend makes
	// (docs/proxy.md): connection names of up to 125-MaxIDLen characters
	// keep every handle within CSI's 128 bytes.
	MaxIDLen int
	// OverLimit says which handle a 63-character connection name pushes
	// over 128 bytes with Kubernetes' names (pvc-<uid>, snapshot-<uid>):
	// "volume", "snapshot", or "" when none can be.
	OverLimit string
	// NeedsVM: nodes need kernel storage clients, which only the storage
	// VM's node has; pods of the row run there.
	NeedsVM bool
	// Release is the chart install the row's StorageClass names: "" the
	// main release (e2e/deploy/main-values.yaml), ClientsRelease the share
	// clients' (e2e/deploy/clients-values.yaml).
	Release string
	// NodeStageSecret goes into a Secret that the StorageClass names as
	// its node-stage secret (SMB credentials).
	NodeStageSecret func(*Env) map[string]string
	// Available says whether the lab has what the row needs.
	Available func(*Env) (bool, string)
	// Connection renders the connection file for connection conn.
	Connection func(e *Env, conn string) string
	// Parameters are the StorageClass parameters besides connection.
	Parameters func(*Env) map[string]string
	// MountOptions are the StorageClass's mountOptions.
	MountOptions []string
	// Leftovers lists what connection conn still has on the storage
	// system (datasets, zvols, directories, volumes): empty after every
	// volume and snapshot of it has been deleted. made are the backend ids
	// the spec made (its handles without v:<conn>/), for storage that is
	// not divided by connection (an Infinia service).
	Leftovers func(ctx context.Context, e *Env, conn string, made []string) ([]string, error)
}

// Families is the table, in the order the suites run them: the host
// node first (it needs no VM), then the storage VM's protocols.
func Families() []Family {
	return []Family{
		localHostpath(),
		zfsGeneric("zfs-generic-nfs", "zfs-nfs", false),
		zfsGeneric("zfs-generic-smb", "zfs-smb", false),
		zfsGeneric("zfs-generic-iscsi", "zfs-iscsi", true),
		zfsGeneric("zfs-generic-nvmeof", "zfs-nvme", true),
		truenasAPI("freenas-api-nfs", "tn-nfs", false),
		truenasAPI("freenas-api-iscsi", "tn-iscsi", true),
		truenasAPI("freenas-api-nvmeof", "tn-nvme", true),
		infiniaNVMeoF(),
		synology("synology-iscsi", "syn-iscsi"),
		synology("synology-nfs", "syn-nfs"),
		synology("synology-smb", "syn-smb"),
		shareClient("nfs-client", "nfsc"),
		shareClient("smb-client", "smbc"),
	}
}

// Lookup finds a row by name.
func Lookup(name string) (Family, error) {
	var names []string
	for _, f := range Families() {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return Family{}, fmt.Errorf("no backend family %q; the table has %v", name, names)
}

// StorageParameters are the row's parameters plus the connection.
func (f Family) StorageParameters(e *Env, conn string) map[string]string {
	p := map[string]string{"connection": conn}
	if f.Parameters != nil {
		for k, v := range f.Parameters(e) {
			p[k] = v
		}
	}
	if f.FSType != "" {
		p["csi.storage.k8s.io/fstype"] = f.FSType
	}
	return p
}

// Modes are the volumeModes of the row ("Filesystem", "Block").
func (f Family) Modes() []string {
	var m []string
	if f.Filesystem {
		m = append(m, "Filesystem")
	}
	if f.Block {
		m = append(m, "Block")
	}
	return m
}

// ConnectionFile is the family's connection file for the main release
// (nodeTopology type node). The storage VM's simulators serve their
// targets on the VM's loopback, which only the VM's node reaches: the
// file says so with proxy.perDriver.topology, so the volumes' node
// affinity keeps pods, and the per-node controllers' provisioning,
// snapshots and deletion, on that node. Without a VM, the ZFS simulator
// runs on the host and its volumes belong to the host's node: a volume
// without node affinity would be snapshotted by no node (distributed
// snapshotting goes by the volume's node).
func ConnectionFile(e *Env, fam Family, conn string) string {
	s := fam.Connection(e, conn)
	if node := e.Lab.StorageNode(); fam.NeedsVM && node != "" {
		s += fmt.Sprintf("proxy:\n  perDriver:\n    topology:\n    - requirements:\n        node: %s\n", node)
	}
	return s
}

// SafeConnectionLen is the longest connection name whose handles always
// fit CSI's 128 bytes: 128 - len("v:") - len("/") - MaxIDLen.
func (f Family) SafeConnectionLen() int { return 128 - 3 - f.MaxIDLen }

// SafeName is a connection name of exactly SafeConnectionLen characters.
func (f Family) SafeName() string { return pad("e2e-safe-"+f.Short+"-", f.SafeConnectionLen()) }

// LongName is a connection name of 63 characters, the most a name may
// have: with OverLimit set, one of its handles cannot fit.
func (f Family) LongName() string { return pad("e2e-long-"+f.Short+"-", 63) }

func pad(s string, n int) string {
	for len(s) < n {
		s += "x"
	}
	return s[:n]
}
