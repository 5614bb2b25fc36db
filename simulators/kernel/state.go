package kernel

import (
	"fmt"
	"maps"
	"net"
	"path"
	"slices"
	"strings"
)

// State is what one owner wants the kernel to serve.
type State struct {
	NVMe  []Subsystem
	ISCSI []Target
	NFS   []Export
	SMB   []Share
}

// Subsystem is an NVMe-oF subsystem (nvmet).
type Subsystem struct {
	NQN          string
	AllowAnyHost bool
	// Hosts are the host NQNs allowed in when AllowAnyHost is false.
	Hosts []string
	// Serial is attr_serial; empty keeps the kernel's random one.
	Serial     string
	Namespaces []Namespace
	// Listeners are the TCP addresses the subsystem is offered on.
	Listeners []Listener
}

// Namespace is one namespace of a subsystem.
type Namespace struct {
	NSID int
	// Path is a regular file (served through a loop device) or a block device.
	Path string
	// UUID and NGUID are device_uuid and device_nguid; empty keeps the
	// kernel's (a random UUID, a zero NGUID).
	UUID  string
	NGUID string
}

// Listener is an NVMe/TCP address; subsystems on the same address share
// one nvmet port. A wildcard address (0.0.0.0, ::) is served as 0.0.0.0,
// so that owners asking for either share one port rather than collide on
// it. Owners sharing a kernel must agree on one address per TCP port:
// Linux cannot listen on 127.0.0.1:4420 and 0.0.0.0:4420 at once.
type Listener struct {
	Addr string // an IPv4 or IPv6 address, e.g. 127.0.0.1 or 0.0.0.0
	Port int    // 0 means 4420
}

// Target is an iSCSI target (LIO) with one target portal group.
type Target struct {
	IQN string
	TPG int // the portal group tag; 0 means 1
	// LUNs are served by iblock storage objects, one per device.
	LUNs    []LUN
	Portals []Portal
	// CHAP, when set, makes initiators authenticate (mutual when
	// MutualUser is set).
	CHAP *CHAP
	// InitiatorACLs are the initiator IQNs let in; empty lets every
	// initiator in (generate_node_acls, LIO's demo mode) unless Closed.
	InitiatorACLs []string
	// Closed: only InitiatorACLs are let in, even when there is none yet
	// (a target made with generate_node_acls=0 whose volume is published
	// to no node admits no initiator).
	Closed bool
}

// LUN maps a file or block device to a logical unit number.
type LUN struct {
	LUN  int
	Path string // a regular file (served through a loop device) or a block device
	// Serial is the T10 unit serial (VPD page 0x80, wwn/vpd_unit_serial)
	// of the LUN's storage object, as targetcli saveconfig keeps it
	// ("wwn"). Initiators identify the LUN by it (udev's by-id links,
	// multipath), so a host that restores its targets after a reboot must
	// give the same one. Empty: a fresh random serial.
	Serial string
}

// Portal is an iSCSI network portal. As for Listener, a wildcard address
// is served as 0.0.0.0 (targetcli's default portal [::0] included), and
// targets sharing a port must agree on its address.
type Portal struct {
	Addr string // an IPv4 or IPv6 address, e.g. 127.0.0.1 or 0.0.0.0
	Port int    // 0 means 3260
}

// CHAP holds iSCSI CHAP credentials.
type CHAP struct {
	User, Secret             string
	MutualUser, MutualSecret string
}

// Export is an NFS export.
type Export struct {
	// Path is what clients mount (server:/Path).
	Path string
	// Source is the directory holding the data; when it differs from
	// Path it is bind-mounted at Path.
	Source string
	// Options is an exports(5) client list such as
	// "127.0.0.1(rw,no_root_squash) *(ro)", or a bare option list
	// ("rw,no_root_squash") for the default client 127.0.0.0/8. Empty means
	// 127.0.0.0/8(rw,sync,no_root_squash,no_subtree_check). Every client
	// gets fsid=<a number derived from Path> unless it names an fsid:
	// exports of one filesystem need distinct ones, tmpfs has none.
	Options string
}

// Share is an SMB share.
type Share struct {
	Name string
	// Path is the directory smb.conf names; Source, when it differs, is
	// bind-mounted there.
	Path   string
	Source string
	// Options are smb.conf share keys ("read only": "yes", ...); they
	// override the defaults (writable, files written as root).
	Options map[string]string
	// Guest lets clients in without a password (guest ok, guest only).
	Guest bool
}

const (
	defaultNVMePort  = 4420
	defaultISCSIPort = 3260
	maxNameLen       = 223 // NQNs and IQNs
	// maxShareName is OpenZFS libshare's SMB_NAME_MAX (share names come
	// from dataset names). 80 is only what NetShareEnum lists to Windows;
	// Samba serves and mount.cifs connects to longer names.
	maxShareName = 255
)

// normalize fills in defaults and sorts every list, so that two States
// that mean the same compare equal.
func (s State) normalize() State {
	var out State
	for _, sub := range s.NVMe {
		sub.Hosts = sortedUnique(sub.Hosts)
		sub.Namespaces = slices.Clone(sub.Namespaces)
		for i := range sub.Namespaces {
			sub.Namespaces[i].Path = cleanAbs(sub.Namespaces[i].Path)
			sub.Namespaces[i].UUID = canonicalUUID(sub.Namespaces[i].UUID)
			sub.Namespaces[i].NGUID = canonicalUUID(sub.Namespaces[i].NGUID)
		}
		slices.SortFunc(sub.Namespaces, func(a, b Namespace) int { return a.NSID - b.NSID })
		sub.Listeners = slices.Clone(sub.Listeners)
		for i := range sub.Listeners {
			if sub.Listeners[i].Port == 0 {
				sub.Listeners[i].Port = defaultNVMePort
			}
			sub.Listeners[i].Addr = canonicalIP(sub.Listeners[i].Addr)
		}
		slices.SortFunc(sub.Listeners, func(a, b Listener) int { return strings.Compare(a.key(), b.key()) })
		sub.Listeners = slices.Compact(sub.Listeners)
		out.NVMe = append(out.NVMe, sub)
	}
	slices.SortFunc(out.NVMe, func(a, b Subsystem) int { return strings.Compare(a.NQN, b.NQN) })
	for _, t := range s.ISCSI {
		t.IQN = strings.ToLower(t.IQN)
		if t.TPG == 0 {
			t.TPG = 1
		}
		t.LUNs = slices.Clone(t.LUNs)
		for i := range t.LUNs {
			t.LUNs[i].Path = cleanAbs(t.LUNs[i].Path)
		}
		slices.SortFunc(t.LUNs, func(a, b LUN) int { return a.LUN - b.LUN })
		t.Portals = slices.Clone(t.Portals)
		for i := range t.Portals {
			if t.Portals[i].Port == 0 {
				t.Portals[i].Port = defaultISCSIPort
			}
			t.Portals[i].Addr = canonicalIP(t.Portals[i].Addr)
		}
		slices.SortFunc(t.Portals, func(a, b Portal) int { return strings.Compare(a.dir(), b.dir()) })
		t.Portals = slices.Compact(t.Portals)
		if t.CHAP != nil {
			c := *t.CHAP
			t.CHAP = &c
		}
		t.InitiatorACLs = sortedUnique(lower(t.InitiatorACLs))
		out.ISCSI = append(out.ISCSI, t)
	}
	slices.SortFunc(out.ISCSI, func(a, b Target) int { return strings.Compare(a.IQN, b.IQN) })
	for _, e := range s.NFS {
		e.Path = cleanAbs(e.Path)
		e.Source = cleanAbs(e.Source)
		if e.Source == e.Path {
			e.Source = ""
		}
		e.Options = strings.Join(strings.Fields(e.Options), " ")
		out.NFS = append(out.NFS, e)
	}
	slices.SortFunc(out.NFS, func(a, b Export) int { return strings.Compare(a.Path, b.Path) })
	for _, sh := range s.SMB {
		sh.Path = cleanAbs(sh.Path)
		sh.Source = cleanAbs(sh.Source)
		if sh.Source == sh.Path {
			sh.Source = ""
		}
		if len(sh.Options) == 0 {
			sh.Options = nil
		} else {
			sh.Options = maps.Clone(sh.Options)
		}
		out.SMB = append(out.SMB, sh)
	}
	slices.SortFunc(out.SMB, func(a, b Share) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out
}

func (l Listener) key() string { return net.JoinHostPort(l.Addr, fmt.Sprint(l.Port)) }

// dir is the portal's configfs name: 127.0.0.1:3260 or [::1]:3260.
func (p Portal) dir() string {
	if strings.Contains(p.Addr, ":") {
		return fmt.Sprintf("[%s]:%d", p.Addr, p.Port)
	}
	return fmt.Sprintf("%s:%d", p.Addr, p.Port)
}

// canonicalUUID writes 16 bytes of hex (with or without '-' or ':') the
// way nvmet shows device_uuid and device_nguid, so that what is read back
// compares equal to what was asked for; anything else is kept (and
// refused by validate).
func canonicalUUID(s string) string {
	hex := strings.ToLower(strings.NewReplacer("-", "", ":", "").Replace(s))
	if len(hex) != 32 || strings.Trim(hex, "0123456789abcdef") != "" {
		return s
	}
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
}

// isUUID reports whether s is in canonicalUUID's form.
func isUUID(s string) bool {
	hex := strings.ReplaceAll(s, "-", "")
	return len(s) == 36 && len(hex) == 32 && canonicalUUID(s) == s && strings.Trim(hex, "0123456789abcdef") == ""
}

// canonicalIP writes an address as the kernel shows it back (::1, not
// 0:0::1), with every wildcard as 0.0.0.0; anything else is kept (and
// refused by validate).
func canonicalIP(a string) string {
	ip := net.ParseIP(a)
	switch {
	case ip == nil:
		return a
	case ip.IsUnspecified():
		return "0.0.0.0"
	}
	return ip.String()
}

func cleanAbs(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

func sortedUnique(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func lower(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}
