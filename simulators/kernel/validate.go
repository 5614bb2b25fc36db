package kernel

import (
	"fmt"
	"net"
	"path"
	"strings"
)

// validate checks a normalized State on its own.
func (s State) validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	seen := map[string]bool{}
	for _, sub := range s.NVMe {
		if err := checkName("NQN", sub.NQN); err != nil {
			bad("nvme subsystem: %v", err)
			continue
		}
		if seen[sub.NQN] {
			bad("nvme subsystem %s is listed twice", sub.NQN)
		}
		seen[sub.NQN] = true
		for _, h := range sub.Hosts {
			if err := checkName("host NQN", h); err != nil {
				bad("nvme subsystem %s: %v", sub.NQN, err)
			}
		}
		if sub.AllowAnyHost && len(sub.Hosts) > 0 {
			bad("nvme subsystem %s: AllowAnyHost and Hosts exclude each other (nvmet refuses both)", sub.NQN)
		}
		nsids := map[int]bool{}
		for _, ns := range sub.Namespaces {
			switch {
			case ns.NSID < 1 || ns.NSID > 0xfffffffe:
				bad("nvme subsystem %s: namespace id %d is out of range 1-4294967294", sub.NQN, ns.NSID)
			case nsids[ns.NSID]:
				bad("nvme subsystem %s: namespace %d is listed twice", sub.NQN, ns.NSID)
			case !path.IsAbs(ns.Path):
				bad("nvme subsystem %s: namespace %d: path %q is not absolute", sub.NQN, ns.NSID, ns.Path)
			}
			for _, id := range []string{ns.UUID, ns.NGUID} {
				if id != "" && !isUUID(id) {
					bad("nvme subsystem %s: namespace %d: %q is not 16 bytes of hex (a UUID)", sub.NQN, ns.NSID, id)
				}
			}
			nsids[ns.NSID] = true
		}
		for _, l := range sub.Listeners {
			if err := checkAddr(l.Addr, l.Port); err != nil {
				bad("nvme subsystem %s: listener: %v", sub.NQN, err)
			}
		}
	}
	seen = map[string]bool{}
	for _, t := range s.ISCSI {
		if err := checkName("IQN", t.IQN); err != nil {
			bad("iscsi target: %v", err)
			continue
		}
		if !strings.HasPrefix(t.IQN, "iqn.") && !strings.HasPrefix(t.IQN, "eui.") && !strings.HasPrefix(t.IQN, "naa.") {
			bad("iscsi target %s: the name must start with iqn., eui. or naa.", t.IQN)
		}
		if seen[t.IQN] {
			bad("iscsi target %s is listed twice", t.IQN)
		}
		seen[t.IQN] = true
		if t.TPG < 1 || t.TPG > 65535 {
			bad("iscsi target %s: portal group tag %d is out of range 1-65535", t.IQN, t.TPG)
		}
		luns := map[int]bool{}
		for _, l := range t.LUNs {
			switch {
			case l.LUN < 0 || l.LUN > 65535:
				bad("iscsi target %s: LUN %d is out of range 0-65535", t.IQN, l.LUN)
			case luns[l.LUN]:
				bad("iscsi target %s: LUN %d is listed twice", t.IQN, l.LUN)
			case !path.IsAbs(l.Path):
				bad("iscsi target %s: LUN %d: path %q is not absolute", t.IQN, l.LUN, l.Path)
			case !validSerial(l.Serial):
				bad("iscsi target %s: LUN %d: unit serial %q: want at most %d printable ASCII characters without spaces", t.IQN, l.LUN, l.Serial, maxUnitSerial)
			}
			luns[l.LUN] = true
		}
		for _, p := range t.Portals {
			if err := checkAddr(p.Addr, p.Port); err != nil {
				bad("iscsi target %s: portal: %v", t.IQN, err)
			}
		}
		if c := t.CHAP; c != nil {
			if c.User == "" || c.Secret == "" {
				bad("iscsi target %s: CHAP needs a user and a secret", t.IQN)
			}
			if (c.MutualUser == "") != (c.MutualSecret == "") {
				bad("iscsi target %s: mutual CHAP needs both a user and a secret", t.IQN)
			}
			for _, v := range []string{c.User, c.Secret, c.MutualUser, c.MutualSecret} {
				if strings.ContainsAny(v, "\n\x00") {
					bad("iscsi target %s: CHAP credentials must be one line", t.IQN)
					break
				}
			}
		}
		for _, a := range t.InitiatorACLs {
			if err := checkName("initiator IQN", a); err != nil {
				bad("iscsi target %s: %v", t.IQN, err)
			}
		}
	}
	seen = map[string]bool{}
	for _, e := range s.NFS {
		if err := checkDir("nfs export path", e.Path); err != nil {
			bad("%v", err)
			continue
		}
		if e.Source != "" && !path.IsAbs(e.Source) {
			bad("nfs export %s: source %q is not absolute", e.Path, e.Source)
		}
		if seen[e.Path] {
			bad("nfs export %s is listed twice", e.Path)
		}
		seen[e.Path] = true
		if _, err := exportClients(e); err != nil {
			bad("nfs export %s: %v", e.Path, err)
		}
	}
	seen = map[string]bool{}
	for _, sh := range s.SMB {
		if err := checkShareName(sh.Name); err != nil {
			bad("%v", err)
			continue
		}
		if seen[strings.ToLower(sh.Name)] {
			bad("smb share %s is listed twice (names are case-insensitive)", sh.Name)
		}
		seen[strings.ToLower(sh.Name)] = true
		if err := checkDir("smb share "+sh.Name+" path", sh.Path); err != nil {
			bad("%v", err)
		}
		if sh.Source != "" && !path.IsAbs(sh.Source) {
			bad("smb share %s: source %q is not absolute", sh.Name, sh.Source)
		}
		for k, v := range sh.Options {
			if k == "" || strings.ContainsAny(k, "=[]\n\x00") || strings.ContainsAny(v, "\n\x00") {
				bad("smb share %s: option %q = %q is not a valid smb.conf line", sh.Name, k, v)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("kernel: invalid state: %s", strings.Join(errs, "; "))
	}
	return nil
}

// checkName checks an NQN or IQN: it becomes a configfs directory name.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > maxNameLen:
		return fmt.Errorf("%s %.40s... is %d bytes long, more than %d", what, s, len(s), maxNameLen)
	case strings.ContainsAny(s, "/ \t\n\x00") || s == "." || s == "..":
		return fmt.Errorf("%s %q contains a character configfs cannot name (/ or white space)", what, s)
	}
	return nil
}

func checkAddr(addr string, port int) error {
	if net.ParseIP(addr) == nil {
		return fmt.Errorf("%q is not an IP address", addr)
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("port %d of %s is out of range 1-65535", port, addr)
	}
	return nil
}

func checkDir(what, p string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("%s %q is not absolute", what, p)
	case p == "/":
		return fmt.Errorf("%s is /", what)
	case strings.ContainsAny(p, "\n\x00"):
		return fmt.Errorf("%s %q contains a line break", what, p)
	}
	return nil
}

// checkShareName follows Samba's rules for a section name.
func checkShareName(n string) error {
	switch {
	case n == "":
		return fmt.Errorf("smb share with an empty name")
	case len(n) > maxShareName:
		return fmt.Errorf("smb share name %.40s... is longer than %d characters", n, maxShareName)
	case strings.ContainsAny(n, "[]\n\x00\\/"):
		return fmt.Errorf("smb share name %q contains [, ], / or \\", n)
	case strings.EqualFold(n, "global") || strings.EqualFold(n, "homes") || strings.EqualFold(n, "printers") || strings.EqualFold(n, "ipc$"):
		return fmt.Errorf("smb share name %q is reserved by Samba", n)
	}
	return nil
}

// maxUnitSerial is LIO's limit for vpd_unit_serial (INQUIRY_VPD_SERIAL_LEN
// less its NUL).
const maxUnitSerial = 253

// validSerial reports whether LIO takes s as a unit serial ("" is a fresh
// one).
func validSerial(s string) bool {
	if len(s) > maxUnitSerial {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}
