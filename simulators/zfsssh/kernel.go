package zfsssh

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// With Options.Kernel, the modelled nvmet and LIO objects and the datasets'
// sharenfs/sharesmb become real after every command that may change them
// (nvmetcli, targetcli, a zfs command that is not read-only): the
// simulator then serves real initiators, as in the lab's storage VM.

// syncKernel applies the models to the kernel; a nil Kernel does nothing.
func (s *Server) syncKernel() error {
	if s.kernel == nil {
		return nil
	}
	s.kernelMu.Lock()
	defer s.kernelMu.Unlock()
	st, skipped := s.kernelState()
	for _, msg := range skipped {
		s.log.Warn("not served by the kernel", "why", msg)
	}
	return s.kernel.Apply(s.kernelOwner, st)
}

// afterProgram runs the kernel hook after a program that may have changed
// what is served. A failure turns a success into exit status 1 with the
// reason on stderr, as the real tool fails when the kernel refuses.
func (s *Server) afterProgram(p *proc, name string, argv []string, status int) int {
	if s.kernel == nil {
		return status
	}
	switch name {
	case "nvmetcli", "targetcli":
	case "zfs":
		if len(argv) < 2 || zfsReadOnly[argv[1]] {
			return status
		}
	default:
		return status
	}
	err := s.syncKernel()
	if err == nil {
		return status
	}
	if name == "zfs" {
		p.printf("cannot share '%s': %v\n", lastOperand(argv[2:]), err)
	} else {
		p.printf("%s: the kernel refused the configuration: %v\n", name, err)
	}
	if status == 0 {
		return 1
	}
	return status
}

// kernelState translates the models; skipped says what cannot be served
// (a device path that is no zvol or dataset file, a non-TCP port).
func (s *Server) kernelState() (kernel.State, []string) {
	var st kernel.State
	var skipped []string
	nv := s.NVMet()
	for _, sub := range nv.Subsystems {
		ks := kernel.Subsystem{NQN: sub.NQN, AllowAnyHost: sub.Attr["allow_any_host"] == "1", Serial: sub.Attr["serial"]}
		if !ks.AllowAnyHost {
			ks.Hosts = sub.AllowedHosts
		}
		for _, ns := range sub.Namespaces {
			if !ns.Enabled {
				continue
			}
			file, ok := s.realFile(ns.Path)
			if !ok {
				skipped = append(skipped, fmt.Sprintf("nvmet %s namespace %d: %s is no zvol or file in a dataset", sub.NQN, ns.NSID, ns.Path))
				continue
			}
			uuid := ns.UUID
			nguid := ns.NGUID
			if nguid == zeroNGUID {
				nguid = ""
			}
			ks.Namespaces = append(ks.Namespaces, kernel.Namespace{NSID: ns.NSID, Path: file, UUID: uuid, NGUID: nguid})
		}
		for _, pt := range nv.Ports {
			if !contains(pt.Subsystems, sub.NQN) {
				continue
			}
			port, err := strconv.Atoi(pt.Trsvcid)
			if pt.Trtype != "tcp" || err != nil || (pt.Adrfam != "ipv4" && pt.Adrfam != "ipv6") {
				skipped = append(skipped, fmt.Sprintf("nvmet port %d (%s %s:%s) is not TCP over IP", pt.ID, pt.Trtype, pt.Traddr, pt.Trsvcid))
				continue
			}
			ks.Listeners = append(ks.Listeners, kernel.Listener{Addr: pt.Traddr, Port: port})
		}
		st.NVMe = append(st.NVMe, ks)
	}

	lio := s.LIO()
	devs := map[string]string{}       // "/backstores/<plugin>/<name>" -> device or file
	sos := map[string]StorageObject{} // the same -> the object (its wwn is the unit serial)
	for _, so := range lio.StorageObjects {
		devs["/backstores/"+so.Plugin+"/"+so.Name] = so.Dev
		sos["/backstores/"+so.Plugin+"/"+so.Name] = so
	}
	for _, t := range lio.Targets {
		g := firstEnabledTPG(t)
		if g == nil {
			continue
		}
		kt := kernel.Target{IQN: t.WWN, TPG: g.Tag}
		for _, l := range g.LUNs {
			file, ok := s.realFile(devs[l.StorageObject])
			if !ok {
				skipped = append(skipped, fmt.Sprintf("iscsi %s LUN %d: %s (%s) is no zvol or file in a dataset", t.WWN, l.Index, l.StorageObject, devs[l.StorageObject]))
				continue
			}
			kt.LUNs = append(kt.LUNs, kernel.LUN{LUN: l.Index, Path: file, Serial: sos[l.StorageObject].WWN})
		}
		for _, pt := range g.Portals {
			kt.Portals = append(kt.Portals, kernel.Portal{Addr: pt.IP, Port: pt.Port})
		}
		if g.Attributes["generate_node_acls"] != "1" {
			kt.Closed = true // LIO without demo mode admits the ACLs only, none when there are none
			for _, acl := range g.NodeACLs {
				kt.InitiatorACLs = append(kt.InitiatorACLs, acl.WWN)
			}
		}
		if g.Attributes["authentication"] == "1" {
			kt.CHAP = tpgCHAP(*g)
		}
		st.ISCSI = append(st.ISCSI, kt)
	}

	nfs, smb, more := s.shares()
	st.NFS, st.SMB = nfs, smb
	return st, append(skipped, more...)
}

func firstEnabledTPG(t ISCSITarget) *TPG {
	tpgs := append([]TPG(nil), t.TPGs...)
	sort.Slice(tpgs, func(i, j int) bool { return tpgs[i].Tag < tpgs[j].Tag })
	for i := range tpgs {
		if tpgs[i].Enable {
			return &tpgs[i]
		}
	}
	return nil
}

// tpgCHAP is the TPG's credentials, or else the first ACL's: the kernel
// model has one set per target.
func tpgCHAP(g TPG) *kernel.CHAP {
	auths := []map[string]string{g.Auth}
	for _, acl := range g.NodeACLs {
		auths = append(auths, acl.Auth)
	}
	for _, a := range auths {
		if a["userid"] != "" && a["password"] != "" {
			c := &kernel.CHAP{User: a["userid"], Secret: a["password"]}
			if a["mutual_userid"] != "" && a["mutual_password"] != "" {
				c.MutualUser, c.MutualSecret = a["mutual_userid"], a["mutual_password"]
			}
			return c
		}
	}
	return nil
}

// realFile maps a device path as the models hold it (/dev/zvol/<ds>, or
// a file inside a mounted dataset) to the file on this machine.
func (s *Server) realFile(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	clean := path.Clean(p)
	if ds, ok := strings.CutPrefix(clean, "/dev/zvol/"); ok {
		return s.host.ZvolPath(ds)
	}
	return s.host.HostPath(clean)
}

// shares reads the mounted filesystems' sharenfs and sharesmb and makes
// exports and shares of them as OpenZFS's libshare does on Linux.
func (s *Server) shares() ([]kernel.Export, []kernel.Share, []string) {
	var out, errb bytes.Buffer
	if rc := s.host.ZFS([]string{"list", "-H", "-o", "name,mountpoint,mounted,sharenfs,sharesmb", "-t", "filesystem"}, nil, &out, &errb); rc != 0 {
		return nil, nil, []string{"zfs list for shares: " + strings.TrimSpace(errb.String())}
	}
	var nfs []kernel.Export
	var smb []kernel.Share
	var skipped []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[2] != "yes" || !strings.HasPrefix(f[1], "/") {
			continue
		}
		name, mp, sharenfs, sharesmb := f[0], f[1], f[3], f[4]
		if sharenfs == "off" && sharesmb == "off" {
			continue
		}
		src, ok := s.host.HostPath(mp)
		if !ok {
			continue
		}
		if sharenfs != "off" {
			opts, err := linuxExportOptions(sharenfs)
			switch {
			case err != nil:
				skipped = append(skipped, fmt.Sprintf("%s: sharenfs=%s: %v", name, sharenfs, err))
			case opts != "":
				nfs = append(nfs, kernel.Export{Path: mp, Source: src, Options: opts})
			}
		}
		if sharesmb != "off" {
			smb = append(smb, kernel.Share{Name: smbShareName(name), Path: mp, Source: src})
		}
	}
	return nfs, smb, skipped
}

// smbShareName is libshare's share name: the dataset name with '/', '-',
// ':' and ' ' turned into '_'.
func smbShareName(ds string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '-', ':', ' ':
			return '_'
		}
		return r
	}, ds)
}

// linuxNFSKeys are the options libshare passes to exportfs (sorted).
var linuxNFSKeys = map[string]bool{"all_squash": true, "anongid": true, "anonuid": true, "async": true, "auth_nlm": true,
	"crossmnt": true, "fsid": true, "fsuid": true, "hide": true, "insecure": true, "insecure_locks": true, "mountpoint": true,
	"mp": true, "no_acl": true, "no_all_squash": true, "no_auth_nlm": true, "no_root_squash": true, "no_subtree_check": true,
	"no_wdelay": true, "nohide": true, "refer": true, "replicas": true, "root_squash": true, "secure": true,
	"secure_locks": true, "subtree_check": true, "sync": true, "wdelay": true}

// linuxExportOptions turns a sharenfs value into exports(5) clients the
// way OpenZFS's Linux libshare writes /etc/exports.d/zfs.exports: "on" is
// "rw,crossmnt"; each rw[=hosts] or ro[=hosts] (hosts separated by ':',
// '@' before a network dropped, none meaning '*') becomes
// host(sec=<sec>,rw|ro,no_subtree_check,mountpoint,<other options>).
// Without rw or ro nothing is exported ("" and no error).
func linuxExportOptions(v string) (string, error) {
	if v == "on" {
		v = "rw,crossmnt"
	}
	type entry struct{ host, sec, access string }
	var entries []entry
	linux := []string{"no_subtree_check", "mountpoint"}
	sec := "sys"
	for _, opt := range strings.Split(v, ",") {
		if opt == "" {
			continue
		}
		key, val, hasVal := strings.Cut(opt, "=")
		switch key {
		case "sec":
			sec = val
			continue
		case "rw", "ro":
			hosts := []string{"*"}
			if hasVal && val != "" {
				hosts = splitHosts(val)
			}
			for _, h := range hosts {
				entries = append(entries, entry{strings.TrimPrefix(h, "@"), sec, key})
			}
			continue
		case "anon":
			key = "anonuid"
		case "root_mapping":
			linux = append(linux, "root_squash")
			key = "anonuid"
		case "nosub":
			key = "subtree_check"
		}
		if !linuxNFSKeys[key] {
			return "", fmt.Errorf("unknown option %q", key)
		}
		if hasVal {
			linux = append(linux, key+"="+val)
		} else {
			linux = append(linux, key)
		}
	}
	clients := make([]string, 0, len(entries))
	for _, e := range entries {
		clients = append(clients, fmt.Sprintf("%s(sec=%s,%s,%s)", e.host, e.sec, e.access, strings.Join(linux, ",")))
	}
	return strings.Join(clients, " "), nil
}

// splitHosts splits a host list on ':', keeping [IPv6] literals whole.
func splitHosts(v string) []string {
	var out []string
	for v != "" {
		if strings.HasPrefix(v, "[") {
			end := strings.Index(v, "]")
			if end < 0 {
				out = append(out, v)
				break
			}
			h := v[1:end]
			rest := v[end+1:]
			if strings.HasPrefix(rest, "/") { // [addr]/len
				i := strings.Index(rest, ":")
				if i < 0 {
					i = len(rest)
				}
				h += rest[:i]
				rest = rest[i:]
			}
			out = append(out, h)
			v = strings.TrimPrefix(rest, ":")
			continue
		}
		h, rest, _ := strings.Cut(v, ":")
		out = append(out, h)
		v = rest
	}
	return out
}
