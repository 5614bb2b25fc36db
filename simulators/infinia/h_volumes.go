package infinia

import (
	"maps"
	"strings"
)

// Volume routes: list, create, get, delete, resize.

// maxVolumeBytes bounds a volume (1 EiB), far above any quota but safe
// from int64 overflow in usage sums.
const maxVolumeBytes = 1 << 60

type createVolumeBody struct {
	VolumeName string `json:"volumeName"`
	NBlocks    int64  `json:"nblocks"`
	BlockSize  int64  `json:"block_size"`
	NvmfTarget string `json:"nvmfTarget"`
	NvmfProp   *struct {
		Transport string `json:"transport"`
	} `json:"nvmfProp"`
	Xattrs map[string]any `json:"xattrs"`
}

func nameError(field, n string) *apiError {
	return errorf(400, "%s %q is invalid: a name is 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit", field, n)
}

// checkBlocks validates a size in blocks.
func checkBlocks(nblocks, blockSize int64) *apiError {
	if nblocks <= 0 {
		return errorf(400, "nblocks must be > 0")
	}
	if nblocks > maxVolumeBytes/blockSize {
		return errorf(400, "nblocks × block_size must not exceed %d bytes", int64(maxVolumeBytes))
	}
	return nil
}

func (b *createVolumeBody) validate() *apiError {
	if !validName(b.VolumeName) {
		return nameError("volumeName", b.VolumeName)
	}
	if b.BlockSize == 0 {
		b.BlockSize = 4096
	}
	if b.BlockSize != 512 && b.BlockSize != 4096 {
		return errorf(400, "block_size must be 512 or 4096, not %d", b.BlockSize)
	}
	if e := checkBlocks(b.NBlocks, b.BlockSize); e != nil {
		return e
	}
	if b.NvmfTarget == "" {
		return errorf(400, "nvmfTarget is required: the subsystem the volume becomes a namespace of")
	}
	if b.NvmfProp != nil && !strings.EqualFold(b.NvmfProp.Transport, "TCP") {
		return errorf(400, "nvmfProp.transport must be TCP, not %q", b.NvmfProp.Transport)
	}
	return nil
}

func (s *Server) listVolumes(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ds, e := s.findDataset(rq)
	if e != nil {
		return 0, nil, e
	}
	names, e := page(rq.r, sortedKeys(ds.Volumes))
	if e != nil {
		return 0, nil, e
	}
	out := []volume{}
	for _, n := range names {
		out = append(out, volumeJSON(ds.Volumes[n]))
	}
	return 200, out, nil
}

func (s *Server) getVolume(rq *request) (int, any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, v, e := s.findVolume(rq)
	if e != nil {
		return 0, nil, e
	}
	return 200, map[string]any{"volume": volumeJSON(v)}, nil
}

func (s *Server) createVolume(rq *request) (int, any, *apiError) {
	var b createVolumeBody
	if e := decodeBody(rq.r, &b); e != nil {
		return 0, nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ds, e := s.findDataset(rq)
	if e != nil {
		return 0, nil, e
	}
	if e := b.validate(); e != nil {
		return 0, nil, e
	}
	if ds.Volumes[b.VolumeName] != nil {
		return 0, nil, errorf(409, "volume %s/%s/%s already exists", rq.p("s"), rq.p("d"), b.VolumeName)
	}
	v := &volume{Name: b.VolumeName, BlockSize: b.BlockSize, NBlocks: b.NBlocks, Xattrs: maps.Clone(b.Xattrs)}
	if v.Xattrs == nil {
		v.Xattrs = map[string]any{}
	}
	return s.addVolume(rq, w, ds, v, b.NvmfTarget, func(t *tx) error {
		if err := s.store.createData(v.UUID, v.size()); err != nil {
			return err
		}
		t.undo = append(t.undo, func() { _ = s.store.removeData(v.UUID) })
		return nil
	})
}

// addVolume stores a new volume v (name, size, xattrs set) in ds, as a
// namespace of subsystem target when there is one; makeData creates its
// data file once the checks have passed.
func (s *Server) addVolume(rq *request, w where, ds *dataset, v *volume, target string, makeData func(*tx) error) (int, any, *apiError) {
	var ss *subsystem
	if target != "" {
		var e *apiError
		if _, ss, e = s.findSubsystem(rq, target); e != nil {
			return 0, nil, e
		}
	}
	nsid := 0
	if ss != nil {
		if nsid = freeNSID(ss); nsid == 0 {
			return 0, nil, errorf(409, "subsystem %s/%s has no free namespace id (at most %d namespaces)", rq.p("s"), target, maxNamespaces)
		}
	}
	if e := checkSpace(rq, w, ds, v.size()); e != nil {
		return 0, nil, e
	}
	t := s.newTx()
	t.touchVolume(rq.p("c"), rq.p("t"), rq.p("s"), rq.p("d"), v.Name)
	if ss != nil {
		t.touch(rq.p("c"), rq.p("t"), rq.p("s"), target, false)
	}
	v.UUID, v.WWN, v.SN = newUUID(), newWWN(), newSerial()
	v.VolumeID = s.st.NextVolumeID
	v.LCore = v.VolumeID % lcores
	if err := makeData(t); err != nil {
		return 0, nil, errorf(500, "creating the data file of volume %s: %v", v.Name, err)
	}
	s.st.NextVolumeID++
	ds.Volumes[v.Name] = v
	if ss != nil {
		v.Subsystem, v.NSID = target, nsid
		ss.Namespaces = append(ss.Namespaces, namespace{NSID: nsid, Dataset: rq.p("d"), Volume: v.Name, UUID: v.UUID})
	}
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 201, volumeJSON(v), nil
}

// lcores is how many cores the simulated instances spread volumes over
// (the volume's lcore).
const lcores = 8

// maxNamespaces is the most namespaces a subsystem holds (Linux nvmet's
// default limit).
const maxNamespaces = 1024

// freeNSID is the lowest unused namespace id from 1, or 0 when full.
func freeNSID(ss *subsystem) int {
	used := map[int]bool{}
	for _, ns := range ss.Namespaces {
		used[ns.NSID] = true
	}
	for id := 1; id <= maxNamespaces; id++ {
		if !used[id] {
			return id
		}
	}
	return 0
}

func (s *Server) deleteVolume(rq *request) (int, any, *apiError) {
	force, e := forceParam(rq.r)
	if e != nil {
		return 0, nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ds, v, e := s.findVolume(rq)
	if e != nil {
		return 0, nil, e
	}
	t := s.newTx()
	t.touchVolume(rq.p("c"), rq.p("t"), rq.p("s"), rq.p("d"), v.Name)
	if ss := w.sub.Subsystems[v.Subsystem]; v.Subsystem != "" && ss != nil {
		if len(ss.Hosts) > 0 && !force {
			return 0, nil, errorf(409, "volume %s/%s/%s is in use: subsystem %s/%s grants hosts %s (delete with force=true)",
				rq.p("s"), rq.p("d"), v.Name, rq.p("s"), v.Subsystem, strings.Join(ss.Hosts, ", "))
		}
		t.touch(rq.p("c"), rq.p("t"), rq.p("s"), v.Subsystem, false)
		detach(ss, rq.p("d"), v.Name)
	}
	delete(ds.Volumes, v.Name)
	uuid := v.UUID
	t.onCommit = append(t.onCommit, func() {
		if err := s.store.removeData(uuid); err != nil {
			s.log.Error("removing a data file", "volume", v.Name, "error", err)
		}
	})
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, nil, nil
}

// detach removes volume dsName/vol from ss: its namespace and its claims
// on listeners (a listener no volume claims any more goes).
func detach(ss *subsystem, dsName, vol string) {
	claim := dsName + "/" + vol
	nss := ss.Namespaces[:0]
	for _, ns := range ss.Namespaces {
		if ns.Dataset != dsName || ns.Volume != vol {
			nss = append(nss, ns)
		}
	}
	ss.Namespaces = nss
	ls := ss.Listeners[:0]
	for _, l := range ss.Listeners {
		l.ExposedBy = removeString(l.ExposedBy, claim)
		if len(l.ExposedBy) > 0 {
			ls = append(ls, l)
		}
	}
	ss.Listeners = ls
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

type resizeBody struct {
	NBlocks int64 `json:"nblocks"`
}

func (s *Server) resizeVolume(rq *request) (int, any, *apiError) {
	var b resizeBody
	if e := decodeBody(rq.r, &b); e != nil {
		return 0, nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ds, v, e := s.findVolume(rq)
	if e != nil {
		return 0, nil, e
	}
	if e := checkBlocks(b.NBlocks, v.BlockSize); e != nil {
		return 0, nil, e
	}
	if b.NBlocks < v.NBlocks {
		return 0, nil, errorf(400, "shrinking is not supported: volume %s has %d blocks, %d requested", v.Name, v.NBlocks, b.NBlocks)
	}
	if b.NBlocks == v.NBlocks {
		return 200, volumeJSON(v), nil
	}
	oldSize := v.size()
	grow := (b.NBlocks - v.NBlocks) * v.BlockSize
	if e := checkSpace(rq, w, ds, grow); e != nil {
		return 0, nil, e
	}
	t := s.newTx()
	t.touchVolume(rq.p("c"), rq.p("t"), rq.p("s"), rq.p("d"), v.Name)
	if v.Subsystem != "" && w.sub.Subsystems[v.Subsystem] != nil {
		t.touch(rq.p("c"), rq.p("t"), rq.p("s"), v.Subsystem, true)
	}
	if err := s.store.resizeData(v.UUID, oldSize+grow); err != nil {
		return 0, nil, errorf(500, "resizing the data file of volume %s: %v", v.Name, err)
	}
	uuid := v.UUID
	t.undo = append(t.undo, func() { _ = s.store.resizeData(uuid, oldSize) })
	v.NBlocks = b.NBlocks
	out := volumeJSON(v)
	if e := t.commit(); e != nil {
		return 0, nil, e
	}
	return 200, out, nil
}
