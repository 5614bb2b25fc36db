package sharing

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// With Options.Kernel the shares and targets become real after every
// change (see package kernel): NFS and SMB shares, iSCSI targets with
// their portals, initiator groups, CHAP and extents, NVMe-oF subsystems
// with their namespaces, ports and hosts. A zvol resized through
// pool.dataset.update is refreshed too, as the middleware resyncs LUN
// sizes after a volsize change.

// applyKernel makes the kernel serve the current objects. Callers hold s.mu.
func (s *Service) applyKernel() error {
	if s.kernel == nil {
		return nil
	}
	st, skipped := s.kernelState()
	for _, msg := range skipped {
		s.log.Warn("not served by the kernel", "why", msg)
	}
	if err := s.kernel.Apply(s.kernelOwner, st); err != nil {
		s.log.Error("kernel refused the sharing configuration", "err", err)
		return middleware.Errorf(middleware.EFAULT, "Failed to apply the sharing configuration: %v", err)
	}
	return nil
}

// Close closes the tables' journals and removes what the service made
// real; the objects stay on disk.
func (s *Service) Close() error {
	var errs []error
	for _, ns := range s.order {
		errs = append(errs, s.t[ns].closeJournal())
	}
	if s.kernel == nil {
		return errors.Join(errs...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(append(errs, s.kernel.Close(s.kernelOwner))...)
}

// resyncAfter wraps a method (pool.dataset.update) so that the kernel
// follows a volsize change: the loop device and namespaces are refreshed.
func (s *Service) resyncAfter(r *middleware.Registry, name string) {
	m, ok := r.Lookup(name)
	if !ok {
		return
	}
	wrapped := *m
	orig := m.Handler
	wrapped.Handler = func(c *middleware.Call, params []json.RawMessage) (any, error) {
		res, err := orig(c, params)
		if err != nil {
			return res, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if kerr := s.applyKernel(); kerr != nil {
			return nil, kerr
		}
		return res, nil
	}
	r.Add(wrapped)
}

// kernelState translates the objects; skipped says what cannot be
// served. Callers hold s.mu.
func (s *Service) kernelState() (kernel.State, []string) {
	var st kernel.State
	var skipped []string
	st.NFS, skipped = s.kernelNFS(skipped)
	st.SMB, skipped = s.kernelSMB(skipped)
	st.ISCSI, skipped = s.kernelISCSI(skipped)
	if s.nvmet() {
		st.NVMe, skipped = s.kernelNVMe(skipped)
	}
	return st, skipped
}

func (s *Service) kernelNFS(skipped []string) ([]kernel.Export, []string) {
	var out []kernel.Export
	for _, r := range s.t[nsNFS].rows {
		if !boolOf(r["enabled"], true) {
			continue
		}
		p := strOf(r["path"])
		src, ok := s.model.HostPath(p)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("NFS share %d: %s is not in a mounted dataset", intOf(r["id"]), p))
			continue
		}
		out = append(out, kernel.Export{Path: p, Source: src, Options: nfsClients(r)})
	}
	return out, skipped
}

// nfsClients renders a sharing.nfs object as exports(5) clients, as the
// middleware's exports template does: every host and network, or
// everyone; ro or rw; root squashed unless mapped to root.
func nfsClients(r middleware.Row) string {
	opts := []string{"rw"}
	if boolOf(r["ro"], false) {
		opts[0] = "ro"
	}
	opts = append(opts, "no_subtree_check")
	if sec := strsOf(r["security"]); len(sec) > 0 {
		for i := range sec {
			sec[i] = strings.ToLower(sec[i])
		}
		opts = append(opts, "sec="+strings.Join(sec, ":"))
	}
	switch {
	case strOf(r["mapall_user"]) == "root":
		opts = append(opts, "all_squash", "anonuid=0", "anongid=0")
	case strOf(r["mapall_user"]) != "":
		opts = append(opts, "all_squash")
	case strOf(r["maproot_user"]) == "root":
		opts = append(opts, "no_root_squash")
	default:
		opts = append(opts, "root_squash")
	}
	clients := append(strsOf(r["hosts"]), strsOf(r["networks"])...)
	if len(clients) == 0 {
		clients = []string{"*"}
	}
	spec := make([]string, len(clients))
	for i, c := range clients {
		spec[i] = c + "(" + strings.Join(opts, ",") + ")"
	}
	return strings.Join(spec, " ")
}

func (s *Service) kernelSMB(skipped []string) ([]kernel.Share, []string) {
	var out []kernel.Share
	for _, r := range s.t[nsSMB].rows {
		if !boolOf(r["enabled"], true) {
			continue
		}
		p := strOf(r["path"])
		src, ok := s.model.HostPath(p)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("SMB share %s: %s is not in a mounted dataset", strOf(r["name"]), p))
			continue
		}
		ro := boolOf(r["readonly"], false) || boolOf(r["ro"], false)
		guest := boolOf(r["guestok"], false)
		if o, ok := r["options"].(map[string]any); ok {
			guest = guest || boolOf(o["guestok"], false)
		}
		out = append(out, kernel.Share{Name: strOf(r["name"]), Path: p, Source: src, Guest: guest, Options: map[string]string{
			"read only":  yesNo(ro),
			"browseable": yesNo(boolOf(r["browsable"], true)),
		}})
	}
	return out, skipped
}

func (s *Service) kernelISCSI(skipped []string) ([]kernel.Target, []string) {
	global := s.t[nsISCSIGlobal].get(1)
	port := intOf(global["listen_port"])
	portals := map[int][]kernel.Portal{}
	for _, r := range s.t[nsPortal].rows {
		for _, l := range objs(r["listen"]) {
			portals[intOf(r["id"])] = append(portals[intOf(r["id"])], kernel.Portal{Addr: strOf(l["ip"]), Port: port})
		}
	}
	extents := map[int]middleware.Row{}
	for _, e := range s.t[nsExtent].rows {
		extents[intOf(e["id"])] = e
	}
	var out []kernel.Target
	for _, t := range s.t[nsTarget].rows {
		if mode := strOf(t["mode"]); mode != "" && mode != "ISCSI" && mode != "BOTH" {
			continue
		}
		if len(objs(t["groups"])) == 0 {
			// No group, no access: the middleware's LIO config makes no TPG
			// for it (utils/lio/config.py), SCST no INITIATOR in the
			// security group holding its LUNs (scst.conf.mako).
			continue
		}
		kt := kernel.Target{IQN: s.basename() + ":" + strOf(t["name"])}
		demo := false
		acls := map[string]bool{}
		for _, g := range objs(t["groups"]) {
			kt.Portals = append(kt.Portals, portals[intOf(g["portal"])]...)
			initiators := []string(nil)
			if g["initiator"] != nil {
				if ig := s.t[nsInitiator].get(intOf(g["initiator"])); ig != nil {
					initiators = strsOf(ig["initiators"])
				}
			}
			if len(initiators) == 0 {
				demo = true
			}
			for _, i := range initiators {
				acls[i] = true
			}
			if m := strOf(g["authmethod"]); (m == "CHAP" || m == "CHAP_MUTUAL") && kt.CHAP == nil {
				kt.CHAP = s.chapOf(intOf(g["auth"]), m == "CHAP_MUTUAL")
			}
		}
		if !demo {
			for i := range acls {
				kt.InitiatorACLs = append(kt.InitiatorACLs, i)
			}
			sort.Strings(kt.InitiatorACLs)
		}
		for _, te := range s.t[nsTargetExt].rows {
			if intOf(te["target"]) != intOf(t["id"]) {
				continue
			}
			e := extents[intOf(te["extent"])]
			if e == nil || !boolOf(e["enabled"], true) {
				continue
			}
			file, ok := s.backingFile(strOf(e["path"]))
			if !ok {
				skipped = append(skipped, fmt.Sprintf("iSCSI extent %s: %s is no zvol or file in a dataset", strOf(e["name"]), strOf(e["path"])))
				continue
			}
			kt.LUNs = append(kt.LUNs, kernel.LUN{LUN: intOf(te["lunid"]), Path: file, Serial: strOf(e["serial"])})
		}
		out = append(out, kt)
	}
	return out, skipped
}

// chapOf is the first credential of an auth tag.
func (s *Service) chapOf(tag int, mutual bool) *kernel.CHAP {
	rows := s.authByTag(tag)
	if len(rows) == 0 {
		return nil
	}
	a := rows[0]
	c := &kernel.CHAP{User: strOf(a["user"]), Secret: strOf(a["secret"])}
	if mutual {
		c.MutualUser, c.MutualSecret = strOf(a["peeruser"]), strOf(a["peersecret"])
	}
	return c
}

func (s *Service) kernelNVMe(skipped []string) ([]kernel.Subsystem, []string) {
	ports := map[int]middleware.Row{}
	for _, p := range s.t[nsPort].rows {
		ports[intOf(p["id"])] = p
	}
	hosts := map[int]string{}
	for _, h := range s.t[nsHost].rows {
		hosts[intOf(h["id"])] = strOf(h["hostnqn"])
	}
	var out []kernel.Subsystem
	for _, sub := range s.t[nsSubsys].rows {
		id := intOf(sub["id"])
		ks := kernel.Subsystem{NQN: strOf(sub["subnqn"]), AllowAnyHost: boolOf(sub["allow_any_host"], false)}
		if serial := strOf(sub["serial"]); serial != "" && len(serial) <= 20 {
			ks.Serial = serial // nvmet takes at most 20 characters
		}
		if !ks.AllowAnyHost {
			for _, hs := range s.t[nsHostSubsys].rows {
				if intOf(hs["subsys_id"]) == id && hosts[intOf(hs["host_id"])] != "" {
					ks.Hosts = append(ks.Hosts, hosts[intOf(hs["host_id"])])
				}
			}
		}
		for _, ns := range s.t[nsNamespace].rows {
			if intOf(ns["subsys_id"]) != id || !boolOf(ns["enabled"], true) {
				continue
			}
			file, ok := s.backingFile(strOf(ns["device_path"]))
			if !ok {
				skipped = append(skipped, fmt.Sprintf("NVMe-oF namespace %d of %s: %s is no zvol or file in a dataset", intOf(ns["nsid"]), ks.NQN, strOf(ns["device_path"])))
				continue
			}
			ks.Namespaces = append(ks.Namespaces, kernel.Namespace{NSID: intOf(ns["nsid"]), Path: file,
				UUID: strOf(ns["device_uuid"]), NGUID: strOf(ns["device_nguid"])})
		}
		for _, ps := range s.t[nsPortSubsys].rows {
			p := ports[intOf(ps["port_id"])]
			if intOf(ps["subsys_id"]) != id || p == nil || !boolOf(p["enabled"], true) {
				continue
			}
			svc, err := strconv.Atoi(fmt.Sprint(p["addr_trsvcid"]))
			if strOf(p["addr_trtype"]) != "TCP" || err != nil {
				skipped = append(skipped, fmt.Sprintf("NVMe-oF port %d (%s) is not TCP", intOf(p["id"]), strOf(p["addr_trtype"])))
				continue
			}
			ks.Listeners = append(ks.Listeners, kernel.Listener{Addr: strOf(p["addr_traddr"]), Port: svc})
		}
		out = append(out, ks)
	}
	return out, skipped
}

// backingFile maps an extent's or namespace's path ("zvol/<dataset>" or a
// file under /mnt) to the file on this machine.
func (s *Service) backingFile(p string) (string, bool) {
	if ds, ok := strings.CutPrefix(strings.TrimPrefix(p, "/dev/"), "zvol/"); ok {
		return s.model.ZvolPath(ds)
	}
	return s.model.HostPath(p)
}

// boolOf reads a boolean from a row (def when absent or null).
func boolOf(v any, def bool) bool {
	b, ok := v.(bool)
	if !ok {
		return def
	}
	return b
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
