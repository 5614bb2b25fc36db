package infinia

import (
	"maps"
	"slices"
	"strings"
)

// Volume routes that act on the volume's subsystem (expose, unexpose) and
// clone.

type exposeBody struct {
	Nvmf *struct {
		Transport  string `json:"transport"`
		InstanceID *int   `json:"instanceId"`
	} `json:"nvmf"`
}

// exposeVolume adds a listener of the instance (its data_ip, the
// subsystem's port) to the volume's subsystem, claimed by this volume.
// Idempotent. Answers the subsystem.
func (s *Server) exposeVolume(rq *request) (int, any, *apiError) {
	var b exposeBody
	if e := decodeBody(rq.r, &b); e != nil {
		return 0, nil, e
	}
	switch {
	case b.Nvmf == nil:
		return 0, nil, errorf(400, "nvmf is required: {\"nvmf\": {\"transport\": \"TCP\", \"instanceId\": <id>}}")
	case !strings.EqualFold(b.Nvmf.Transport, "TCP"):
		return 0, nil, errorf(400, "nvmf.transport must be TCP, not %q", b.Nvmf.Transport)
	case b.Nvmf.InstanceID == nil:
		return 0, nil, errorf(400, "nvmf.instanceId is required")
	}
	id := *b.Nvmf.InstanceID
	s.mu.Lock()
	defer s.mu.Unlock()
	w, _, v, e := s.findVolume(rq)
	if e != nil {
		return 0, nil, e
	}
	ss := w.sub.Subsystems[v.Subsystem]
	if v.Subsystem == "" || ss == nil {
		return 0, nil, errorf(409, "volume %s/%s/%s is not a namespace of any subsystem: nothing to expose", rq.p("s"), rq.p("d"), v.Name)
	}
	if _, ok := w.cl.instance(id); !ok {
		return 0, nil, errorf(404, "instance %d not found in cluster %s", id, rq.p("c"))
	}
	if len(ss.ReqInstances) > 0 && !slices.Contains(ss.ReqInstances, id) {
		return 0, nil, errorf(400, "instance %d is not one of subsystem %s/%s's reqInstances %v", id, rq.p("s"), v.Subsystem, ss.ReqInstances)
	}
	claim := rq.p("d") + "/" + v.Name
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), v.Subsystem, false)
	i := slices.IndexFunc(ss.Listeners, func(l listener) bool { return l.InstanceID == id })
	switch {
	case i < 0:
		ss.Listeners = append(ss.Listeners, listener{InstanceID: id, ExposedBy: []string{claim}})
		slices.SortFunc(ss.Listeners, func(a, b listener) int { return a.InstanceID - b.InstanceID })
	case !slices.Contains(ss.Listeners[i].ExposedBy, claim):
		ss.Listeners[i].ExposedBy = append(ss.Listeners[i].ExposedBy, claim)
	}
	out := subsystemOf(w.cl, v.Subsystem, ss)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, out, nil
}

// unexposeVolume removes the volume's claims on its subsystem's listeners
// (listeners that other volumes still claim stay). A volume that is no
// namespace has nothing to remove: 200 with data null.
func (s *Server) unexposeVolume(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, _, v, e := s.findVolume(rq)
	if e != nil {
		return 0, nil, e
	}
	ss := w.sub.Subsystems[v.Subsystem]
	if v.Subsystem == "" || ss == nil {
		return 200, nil, nil
	}
	claim := rq.p("d") + "/" + v.Name
	t := s.newTx()
	t.touch(rq.p("c"), rq.p("t"), rq.p("s"), v.Subsystem, false)
	ls := ss.Listeners[:0]
	for _, l := range ss.Listeners {
		if l.ExposedBy = removeString(l.ExposedBy, claim); len(l.ExposedBy) > 0 {
			ls = append(ls, l)
		}
	}
	ss.Listeners = ls
	out := subsystemOf(w.cl, v.Subsystem, ss)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, out, nil
}

type cloneBody struct {
	SrcVol      string `json:"srcVol"`
	SizeInBytes int64  `json:"sizeInBytes"`
	NvmfTarget  string `json:"nvmfTarget"`
}

// cloneVolume makes volume {v} a copy of srcVol (same dataset) with its
// data, block size and xattrs, at sizeInBytes (0: the source's size;
// rounded up to whole blocks; never smaller than the source). With
// nvmfTarget it becomes a namespace of that subsystem, otherwise of none.
func (s *Server) cloneVolume(rq *request) (int, any, *apiError) {
	var b cloneBody
	if e := decodeBody(rq.r, &b); e != nil {
		return 0, nil, e
	}
	name := rq.p("v")
	switch {
	case !validName(name):
		return 0, nil, nameError("volume name", name)
	case b.SrcVol == "":
		return 0, nil, errorf(400, "srcVol is required")
	case b.SizeInBytes < 0:
		return 0, nil, errorf(400, "sizeInBytes must not be negative")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ds, e := s.findDataset(rq)
	if e != nil {
		return 0, nil, e
	}
	src := ds.Volumes[b.SrcVol]
	if src == nil {
		return 0, nil, errVolumeNotFound(rq, b.SrcVol)
	}
	nblocks := src.NBlocks
	if b.SizeInBytes > 0 {
		nblocks = (b.SizeInBytes + src.BlockSize - 1) / src.BlockSize
	}
	if nblocks < src.NBlocks {
		return 0, nil, errorf(400, "sizeInBytes %d is smaller than the source's %d bytes", b.SizeInBytes, src.size())
	}
	if e := checkBlocks(nblocks, src.BlockSize); e != nil {
		return 0, nil, e
	}
	if ds.Volumes[name] != nil {
		return 0, nil, errorf(409, "volume %s/%s/%s already exists", rq.p("s"), rq.p("d"), name)
	}
	v := &volume{Name: name, BlockSize: src.BlockSize, NBlocks: nblocks, Xattrs: maps.Clone(src.Xattrs)}
	srcUUID := src.UUID
	return s.addVolume(rq, w, ds, v, b.NvmfTarget, func(t *tx) error {
		if err := s.store.copyData(srcUUID, v.UUID, v.size()); err != nil {
			return err
		}
		t.undo = append(t.undo, func() { _ = s.store.removeData(v.UUID) })
		return nil
	})
}
