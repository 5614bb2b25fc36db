package infinia

import (
	"slices"
	"strings"
)

// NVMe-oF subsystem routes: create, get, delete, list, and host access.

type createSubsystemBody struct {
	Transport    string `json:"transport"`
	ReqInstances []int  `json:"reqInstances"`
	Port         int    `json:"port"`
}

// createSubsystem: every body field is optional (TCP, any instance, port
// 4420); an empty body is fine.
func (s *Server) createSubsystem(rq *request) (int, any, *apiError) {
	var b createSubsystemBody
	if rq.r.ContentLength != 0 {
		if e := decodeBody(rq.r, &b); e != nil {
			return 0, nil, e
		}
	}
	name := rq.p("name")
	switch {
	case !validName(name):
		return 0, nil, nameError("subsystem name", name)
	case b.Transport != "" && !strings.EqualFold(b.Transport, "TCP"):
		return 0, nil, errorf(400, "transport must be TCP, not %q", b.Transport)
	case b.Port < 0 || b.Port > 65535:
		return 0, nil, errorf(400, "port must be 1 to 65535, not %d", b.Port)
	}
	if b.Port == 0 {
		b.Port = DefaultPort
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, e := s.findSubtenant(rq)
	if e != nil {
		return 0, nil, e
	}
	nqn := subsystemNQN(rq.p("c"), rq.p("t"), rq.p("s"), name)
	if len(nqn) > maxNQN {
		return 0, nil, errorf(400, "subsystem name %q is too long: its NQN would be %d bytes, NVMe allows %d", name, len(nqn), maxNQN)
	}
	req := slices.Clone(b.ReqInstances)
	slices.Sort(req)
	req = slices.Compact(req)
	for _, id := range req {
		if _, ok := w.cl.instance(id); !ok {
			return 0, nil, errorf(404, "instance %d not found in cluster %s", id, rq.p("c"))
		}
	}
	if w.sub.Subsystems[name] != nil {
		return 0, nil, errorf(409, "subsystem %s/%s already exists", rq.p("s"), name)
	}
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), name, false)
	ss := &subsystem{NQN: nqn, Serial: newSerial(), Port: b.Port, ReqInstances: req,
		Hosts: []string{}, Namespaces: []namespace{}, Listeners: []listener{}}
	w.sub.Subsystems[name] = ss
	out := subsystemOf(w.cl, name, ss)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 201, out, nil
}

func (s *Server) getSubsystem(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ss, e := s.findSubsystem(rq, rq.p("name"))
	if e != nil {
		return 0, nil, e
	}
	return 200, subsystemOf(w.cl, rq.p("name"), ss), nil
}

// deleteSubsystem: with namespaces only with force=true, which detaches
// the volumes (they stay, as no namespace).
func (s *Server) deleteSubsystem(rq *request) (int, any, *apiError) {
	force, e := forceParam(rq.r)
	if e != nil {
		return 0, nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := rq.p("name")
	w, ss, e := s.findSubsystem(rq, name)
	if e != nil {
		return 0, nil, e
	}
	if len(ss.Namespaces) > 0 && !force {
		vols := make([]string, len(ss.Namespaces))
		for i, ns := range ss.Namespaces {
			vols[i] = ns.Dataset + "/" + ns.Volume
		}
		return 0, nil, errorf(409, "subsystem %s/%s has namespaces (volumes %s): delete with force=true",
			rq.p("s"), name, strings.Join(vols, ", "))
	}
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), name, false)
	for _, ns := range ss.Namespaces {
		if ds := w.sub.Datasets[ns.Dataset]; ds != nil {
			if v := ds.Volumes[ns.Volume]; v != nil {
				t.touchVolume(rq.p("c"), rq.p("t"), rq.p("s"), ns.Dataset, ns.Volume)
				v.Subsystem, v.NSID = "", 0
			}
		}
	}
	delete(w.sub.Subsystems, name)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, nil, nil
}

// listSubsystems is GET P/list: every subsystem of the subtenant, by name.
func (s *Server) listSubsystems(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, e := s.findSubtenant(rq)
	if e != nil {
		return 0, nil, e
	}
	subs := []subsystemJSON{}
	for _, n := range sortedKeys(w.sub.Subsystems) {
		subs = append(subs, subsystemOf(w.cl, n, w.sub.Subsystems[n]))
	}
	return 200, map[string]any{"targets": []any{map[string]any{"subsystems": subs}}}, nil
}

func (s *Server) listHosts(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ss, e := s.findSubsystem(rq, rq.p("name"))
	if e != nil {
		return 0, nil, e
	}
	out := slices.Clone(ss.Hosts)
	if out == nil {
		out = []string{}
	}
	return 200, out, nil
}

type hostBody struct {
	HostNQN string `json:"host_nqn"`
}

// addHost grants a host NQN access; answers the subsystem.
func (s *Server) addHost(rq *request) (int, any, *apiError) {
	var b hostBody
	if e := decodeBody(rq.r, &b); e != nil {
		return 0, nil, e
	}
	if !validHostNQN(b.HostNQN) {
		return 0, nil, errorf(400, "host_nqn %q is not an NVMe qualified name (\"nqn.…\", printable, no \"/\", at most %d bytes)", b.HostNQN, maxNQN)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := rq.p("name")
	w, ss, e := s.findSubsystem(rq, name)
	if e != nil {
		return 0, nil, e
	}
	if slices.Contains(ss.Hosts, b.HostNQN) {
		return 0, nil, errorf(409, "host %s already added to subsystem %s/%s", b.HostNQN, rq.p("s"), name)
	}
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), name, false)
	ss.Hosts = append(ss.Hosts, b.HostNQN)
	slices.Sort(ss.Hosts)
	out := subsystemOf(w.cl, name, ss)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 201, out, nil
}

// removeHost revokes a host NQN; answers the subsystem.
func (s *Server) removeHost(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, nqn := rq.p("name"), rq.p("nqn")
	w, ss, e := s.findSubsystem(rq, name)
	if e != nil {
		return 0, nil, e
	}
	if !slices.Contains(ss.Hosts, nqn) {
		return 0, nil, errorf(404, "host %s not found in subsystem %s/%s", nqn, rq.p("s"), name)
	}
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), name, false)
	ss.Hosts = removeString(ss.Hosts, nqn)
	out := subsystemOf(w.cl, name, ss)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, out, nil
}
