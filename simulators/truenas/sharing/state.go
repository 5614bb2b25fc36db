package sharing

import (
	"encoding/json"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// State is a read-only snapshot of every sharing object, for tests and
// for the lab (which attaches what the simulator exports).
type State struct {
	ISCSIBasename string // iscsi.global basename; a target's IQN is ISCSIBasename + ":" + name
	NVMetBaseNQN  string // nvmet.global basenqn ("" before 25.10)

	NFSShares          []NFSShare
	SMBShares          []SMBShare
	ISCSIPortals       []ISCSIPortal
	ISCSIInitiators    []ISCSIInitiator
	ISCSITargets       []ISCSITarget
	ISCSIExtents       []ISCSIExtent
	ISCSITargetExtents []ISCSITargetExtent
	NVMetSubsystems    []NVMetSubsys
	NVMetNamespaces    []NVMetNamespace
	NVMetPorts         []NVMetPort
	NVMetPortSubsys    []NVMetPortSubsys
	NVMetHosts         []NVMetHost
	NVMetHostSubsys    []NVMetHostSubsys
}

// NFSShare is a sharing.nfs object.
type NFSShare struct {
	ID           int      `json:"id"`
	Path         string   `json:"path"`
	Comment      string   `json:"comment"`
	Networks     []string `json:"networks"`
	Hosts        []string `json:"hosts"`
	RO           bool     `json:"ro"`
	MaprootUser  *string  `json:"maproot_user"`
	MaprootGroup *string  `json:"maproot_group"`
	MapallUser   *string  `json:"mapall_user"`
	MapallGroup  *string  `json:"mapall_group"`
	Security     []string `json:"security"`
	Enabled      bool     `json:"enabled"`
}

// SMBShare is a sharing.smb object; ReadOnly is `ro` before 25.10 and
// `readonly` from 25.10.
type SMBShare struct {
	ID        int    `json:"id"`
	Purpose   string `json:"purpose"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Comment   string `json:"comment"`
	Enabled   bool   `json:"enabled"`
	Browsable bool   `json:"browsable"`
	ReadOnly  bool   `json:"readonly"`
}

// ISCSIPortal is an iscsi.portal object (listen addresses without ports).
type ISCSIPortal struct {
	ID     int      `json:"id"`
	Tag    int      `json:"tag"`
	Listen []string `json:"-"`
}

// ISCSIInitiator is an iscsi.initiator group; no initiators allows all.
type ISCSIInitiator struct {
	ID         int      `json:"id"`
	Initiators []string `json:"initiators"`
}

// ISCSITarget is an iscsi.target object with its IQN.
type ISCSITarget struct {
	ID     int                `json:"id"`
	Name   string             `json:"name"`
	Alias  *string            `json:"alias"`
	Mode   string             `json:"mode"`
	Groups []ISCSITargetGroup `json:"groups"`
	IQN    string             `json:"-"`
}

// ISCSITargetGroup is one portal/initiator/auth entry of a target.
type ISCSITargetGroup struct {
	Portal     int    `json:"portal"`
	Initiator  *int   `json:"initiator"`
	AuthMethod string `json:"authmethod"`
	Auth       *int   `json:"auth"`
}

// ISCSIExtent is an iscsi.extent object. Path is "zvol/<dataset>" for a
// DISK extent, the file for a FILE extent.
type ISCSIExtent struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	Path      string `json:"path"`
	Serial    string `json:"serial"`
	NAA       string `json:"naa"`
	Blocksize int    `json:"blocksize"`
	RO        bool   `json:"ro"`
	Enabled   bool   `json:"enabled"`
}

// ISCSITargetExtent maps an extent into a target at a LUN.
type ISCSITargetExtent struct {
	ID     int `json:"id"`
	Target int `json:"target"`
	Extent int `json:"extent"`
	LunID  int `json:"lunid"`
}

// NVMetSubsys is an nvmet.subsys object.
type NVMetSubsys struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	SubNQN       string `json:"subnqn"`
	Serial       string `json:"serial"`
	AllowAnyHost bool   `json:"allow_any_host"`
}

// NVMetNamespace is an nvmet.namespace object.
type NVMetNamespace struct {
	ID          int    `json:"id"`
	NSID        int    `json:"nsid"`
	SubsysID    int    `json:"subsys_id"`
	DeviceType  string `json:"device_type"`
	DevicePath  string `json:"device_path"`
	DeviceUUID  string `json:"device_uuid"`
	DeviceNGUID string `json:"device_nguid"`
	Enabled     bool   `json:"enabled"`
}

// NVMetPort is an nvmet.port object; Trsvcid is the TCP port for TCP.
type NVMetPort struct {
	ID      int    `json:"id"`
	Index   int    `json:"index"`
	Trtype  string `json:"addr_trtype"`
	Adrfam  string `json:"addr_adrfam"`
	Traddr  string `json:"addr_traddr"`
	Trsvcid any    `json:"addr_trsvcid"`
	Enabled bool   `json:"enabled"`
}

// NVMetPortSubsys offers a subsystem on a port.
type NVMetPortSubsys struct {
	ID       int `json:"id"`
	PortID   int `json:"port_id"`
	SubsysID int `json:"subsys_id"`
}

// NVMetHost is an nvmet.host object, keys included.
type NVMetHost struct {
	ID            int     `json:"id"`
	HostNQN       string  `json:"hostnqn"`
	DHCHAPKey     *string `json:"dhchap_key"`
	DHCHAPCtrlKey *string `json:"dhchap_ctrl_key"`
}

// NVMetHostSubsys grants a host a subsystem.
type NVMetHostSubsys struct {
	ID       int `json:"id"`
	HostID   int `json:"host_id"`
	SubsysID int `json:"subsys_id"`
}

// State returns a snapshot of all objects.
func (s *Service) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{ISCSIBasename: s.basename()}
	fill(s.t[nsNFS], &st.NFSShares)
	fill(s.t[nsSMB], &st.SMBShares)
	for i, r := range s.t[nsSMB].rows {
		if ro, ok := r["ro"].(bool); ok {
			st.SMBShares[i].ReadOnly = ro
		}
	}
	fill(s.t[nsPortal], &st.ISCSIPortals)
	for i, r := range s.t[nsPortal].rows {
		for _, l := range objs(r["listen"]) {
			st.ISCSIPortals[i].Listen = append(st.ISCSIPortals[i].Listen, strOf(l["ip"]))
		}
	}
	fill(s.t[nsInitiator], &st.ISCSIInitiators)
	fill(s.t[nsTarget], &st.ISCSITargets)
	for i := range st.ISCSITargets {
		st.ISCSITargets[i].IQN = st.ISCSIBasename + ":" + st.ISCSITargets[i].Name
	}
	fill(s.t[nsExtent], &st.ISCSIExtents)
	fill(s.t[nsTargetExt], &st.ISCSITargetExtents)
	if s.nvmet() {
		st.NVMetBaseNQN = s.basenqn()
		fill(s.t[nsSubsys], &st.NVMetSubsystems)
		fill(s.t[nsNamespace], &st.NVMetNamespaces)
		fill(s.t[nsPort], &st.NVMetPorts)
		fill(s.t[nsPortSubsys], &st.NVMetPortSubsys)
		fill(s.t[nsHost], &st.NVMetHosts)
		fill(s.t[nsHostSubsys], &st.NVMetHostSubsys)
	}
	return st
}

// fill decodes a table's rows into a slice of typed objects.
func fill[T any](t *table, out *[]T) {
	*out = make([]T, len(t.rows))
	for i, r := range t.rows {
		b, _ := json.Marshal(r)
		_ = json.Unmarshal(b, &(*out)[i]) // rows are JSON objects with these fields' types
	}
}

// SetTargetInUse marks an iSCSI target (by name) as having initiator
// sessions, or not. While it has, iscsi.target.delete, iscsi.extent.delete
// and iscsi.targetextent.delete of its objects fail with "... is in use."
// unless forced, as on a real system with logged-in initiators.
func (s *Service) SetTargetInUse(name string, inUse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if inUse {
		s.inUse[name] = true
	} else {
		delete(s.inUse, name)
	}
}

// Version is the middleware version the service was registered for.
func (s *Service) Version() middleware.Version { return s.v }
