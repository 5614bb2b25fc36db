package zfsmodel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// zfs receive: stream parsing, destination checks and the data swap.

// ReceiveOptions are zfs receive's flags.
type ReceiveOptions struct {
	Force    bool              // -F: roll back / overwrite the destination
	Props    map[string]string // -o: set locally
	Exclude  []string          // -x: do not receive these
	NoMount  bool              // -u
	Discard  bool              // -d: drop the pool name of the sent name
	LastElem bool              // -e: use only the last element of the sent name
	DryRun   bool              // -n
	Verbose  io.Writer         // -v: progress lines go here when not nil
	// Resumable (-s): a new dataset whose stream breaks off is kept with a
	// receive_resume_token (resume.go).
	Resumable bool
}

// Receive reads a stream made by Send and creates what it carries under
// target (zfs receive).
func (m *Model) Receive(r io.Reader, target string, opts ReceiveOptions) error {
	if len(opts.Props) > 0 {
		vals, err := m.validateProps(sortedKV(opts.Props), Filesystem|Volume, nil, "cannot receive")
		if err != nil {
			return err
		}
		opts.Props = map[string]string{}
		for _, a := range vals {
			opts.Props[a.name] = a.value
		}
	}
	sr := &streamReader{r: bufio.NewReaderSize(r, 1<<16)}
	preamble := make([]byte, preambleLen)
	if _, err := io.ReadFull(sr.r, preamble); err != nil {
		return newErr(KindBadStream, "cannot receive: failed to read from stream")
	}
	if string(preamble[:len(streamMagic)]) != streamMagic {
		return newErr(KindBadStream, "cannot receive: invalid stream (bad magic number)")
	}
	kind, payload, err := sr.next()
	if err != nil || kind != 'H' {
		return newErr(KindBadStream, "cannot receive: invalid stream (bad magic number)")
	}
	var hdr streamHeader
	if err := json.Unmarshal(payload, &hdr); err != nil {
		return newErr(KindBadStream, "cannot receive: invalid stream (bad header)")
	}
	if strings.Contains(target, "@") && hdr.Replicate {
		return newErr(KindInvalid, "cannot receive: cannot specify snapshot name for multi-snapshot stream")
	}
	for {
		kind, payload, err := sr.next()
		if err != nil {
			return newErr(KindBadStream, "cannot receive: failed to read from stream")
		}
		switch kind {
		case 'Z':
			return nil
		case 'B':
			var b streamBegin
			if err := json.Unmarshal(payload, &b); err != nil {
				return newErr(KindBadStream, "cannot receive: invalid stream (bad record)")
			}
			if b.Resumed {
				// A resumed stream carries the one snapshot it continues.
				return m.resumeReceive(sr, b, target, opts)
			}
			if err := m.receiveOne(sr, hdr, b, target, opts); err != nil {
				return err
			}
		default:
			return newErr(KindBadStream, "cannot receive: invalid stream (unexpected record)")
		}
	}
}

// destFor maps a sent snapshot name to its destination snapshot name.
func destFor(hdr streamHeader, b streamBegin, target string, opts ReceiveOptions) string {
	srcFS, snap := splitSnap(b.Name)
	if fs, s, ok := strings.Cut(target, "@"); ok {
		return fs + "@" + s
	}
	rel := ""
	if hdr.Replicate && isDescendant(hdr.TopLevel, srcFS) {
		rel = srcFS[len(hdr.TopLevel):]
	}
	switch {
	case opts.Discard:
		if i := strings.IndexByte(hdr.TopLevel, '/'); i >= 0 {
			rel = hdr.TopLevel[i:] + rel
		}
	case opts.LastElem:
		top := hdr.TopLevel
		if i := strings.LastIndexByte(top, '/'); i >= 0 {
			top = top[i+1:]
		}
		rel = "/" + top + rel
	}
	return target + rel + "@" + snap
}

// receiveOne receives one snapshot: checks and reservations under the
// lock, the data without it, then the results linked under the lock.
func (m *Model) receiveOne(sr *streamReader, hdr streamHeader, b streamBegin, target string, opts ReceiveOptions) error {
	destSnap := destFor(hdr, b, target, opts)
	destFS, snapLeaf := splitSnap(destSnap)
	full := b.FromGUID == 0
	prefix := "cannot receive incremental stream"
	if full {
		prefix = "cannot receive new filesystem stream"
	}
	typ, ok := parseType(b.Type)
	if !ok || typ == Snapshot {
		return newErr(KindBadStream, "cannot receive: invalid stream (bad type)")
	}
	if opts.Verbose != nil {
		kind := "incremental"
		if full {
			kind = "full"
		}
		verb := "receiving"
		if opts.DryRun {
			verb = "would receive"
		}
		fmt.Fprintf(opts.Verbose, "%s %s stream of %s into %s\n", verb, kind, b.Name, destSnap)
	}
	if opts.DryRun {
		return drain(sr)
	}
	st, err := m.prepareReceive(b, typ, destFS, destSnap, snapLeaf, full, prefix, opts)
	if err != nil {
		return err
	}
	defer m.inflight.Done()
	if opts.Resumable && st.newHead != nil {
		// Without a spool the receive still works; it just cannot resume.
		if st.spool, err = newSpooler(filepath.Join(m.dir, "partial")); err != nil {
			st.spool = nil
		}
	}
	st.hdr, st.prefix = hdr, prefix
	recvErr := m.receiveData(sr, st)
	if recvErr == nil {
		// The live data starts as a copy of the received snapshot.
		recvErr = copyData(st.snapPath, st.stage, typ == Filesystem, nil)
	}
	return m.finishReceive(st, b, opts, recvErr)
}

// recvState carries one receive across its unlocked phase.
type recvState struct {
	snap     *dataset // the new snapshot (not yet linked)
	head     *dataset // existing destination, or nil
	newHead  *dataset // destination created by this receive
	destFS   string
	destSnap string
	typ      Type
	snapPath string // where the stream's data lands
	stage    string // the head's new data, swapped in at the end

	spool  *spooler // receive -s into a new dataset: the records so far
	short  bool     // the stream ended early
	hdr    streamHeader
	prefix string
}

// spaceOwner is the dataset whose space a receive uses: the parent of a
// new destination, else the destination.
func (st *recvState) spaceOwner() *dataset {
	if st.newHead != nil {
		return st.newHead.parent
	}
	return st.head
}

func (m *Model) prepareReceive(b streamBegin, typ Type, destFS, destSnap, snapLeaf string, full bool, prefix string, opts ReceiveOptions) (*recvState, error) {
	if err := m.begin(); err != nil {
		return nil, err
	}
	defer m.unlock()
	if aux := nameCheck(destSnap, Snapshot, true); aux != "" {
		return nil, newErr(KindInvalid, "cannot receive: %s", aux)
	}
	st := &recvState{destFS: destFS, destSnap: destSnap, typ: typ}
	head := m.lookup(destFS)
	if head != nil && partialOf(head) != nil {
		return nil, newErr(KindExists, "%s: destination %s contains partially-complete state from \"zfs receive -s\".", prefix, destFS)
	}
	if m.pending[destFS] || m.pending[destSnap] {
		return nil, newErr(KindBusy, "%s: dataset is busy", prefix)
	}
	if head != nil {
		if err := rawOverExisting(head, b, full, opts.Force, prefix); err != nil {
			return nil, err
		}
	}
	switch {
	case head != nil && full:
		if !opts.Force {
			return nil, newErr(KindExists, "%s: destination '%s' exists\nmust specify -F to overwrite it", prefix, destFS)
		}
		if len(head.snaps) > 0 {
			return nil, newErr(KindExists, "%s: destination has snapshots (eg. %s)\nmust destroy them to overwrite it", prefix, head.snaps[0].full)
		}
		if head.origin != nil {
			return nil, newErr(KindExists, "%s: destination '%s' is a clone\nmust destroy it to overwrite it", prefix, destFS)
		}
		if head.typ != typ {
			return nil, newErr(KindBadType, "%s: destination '%s' is not a %s", prefix, destFS, typ)
		}
	case head != nil:
		if head.typ != typ {
			return nil, newErr(KindBadType, "%s: destination '%s' is not a %s", prefix, destFS, typ)
		}
		var base *dataset
		for _, s := range head.snaps {
			if snapGUID(s) == b.FromGUID {
				base = s
			}
		}
		last := (*dataset)(nil)
		if n := len(head.snaps); n > 0 {
			last = head.snaps[n-1]
		}
		if base == nil || base != last && !opts.Force {
			return nil, newErr(KindInvalid, "%s: most recent snapshot of %s does not\nmatch incremental source", prefix, destFS)
		}
		if base != last { // -F: roll back to the incremental source first
			for _, s := range head.snaps {
				if s.txg > base.txg {
					if len(s.clones) > 0 || s.busy > 0 {
						return nil, newErr(KindBusy, "%s: dataset is busy", prefix)
					}
				}
			}
			for _, s := range append([]*dataset(nil), head.snaps...) {
				if s.txg > base.txg {
					t, err := m.destroyOne(s)
					if err != nil {
						return nil, err
					}
					for _, x := range t {
						_ = os.RemoveAll(x)
					}
				}
			}
		}
		if head.snapshot(snapLeaf) != nil {
			return nil, newErr(KindExists, "cannot restore to %s: destination already exists", destSnap)
		}
	default:
		if !full {
			return nil, newErr(KindNotFound, "%s: destination '%s' does not exist", prefix, destFS)
		}
		pname := parentName(destFS)
		if pname == "" {
			return nil, newErr(KindNotFound, "%s: destination '%s' does not exist", prefix, destFS)
		}
		if opts.Discard || opts.LastElem {
			if err := m.createAncestors(destFS); err != nil {
				return nil, err
			}
		}
		parent := m.lookup(pname)
		if parent == nil {
			return nil, newErr(KindNotFound, "cannot open '%s': dataset does not exist\n%s: unable to restore to destination", pname, prefix)
		}
		if parent.typ != Filesystem {
			return nil, newErr(KindBadType, "%s: parent '%s' is not a filesystem", prefix, pname)
		}
		if aux := nameCheck(destFS, typ, true); aux != "" {
			return nil, newErr(KindInvalid, "%s: %s", prefix, aux)
		}
		if b.Crypt == nil && encrypted(parent) && !m.keyLoaded(parent) { // the kernel's EACCES
			return nil, newErr(KindCrypto, "%s: permission denied", prefix)
		}
		nh := m.newDataset(leafOf(destFS), typ, parent, parent.pool)
		if b.Crypt != nil {
			b.Crypt.apply(nh)
		} else if encrypted(parent) {
			// A plain (not raw) stream received below an encrypted
			// dataset is encrypted with its parent's key, as a child made
			// with zfs create is.
			nh.local[cryptSuiteKey] = parent.local[cryptSuiteKey]
			nh.local[cryptRootKey] = parent.local[cryptRootKey]
		}
		if typ == Volume {
			nh.local["volsize"] = strconv.FormatInt(b.Volsize, 10)
			if b.Blocksize != 0 && b.Blocksize != 16384 {
				nh.local["volblocksize"] = strconv.FormatInt(b.Blocksize, 10)
			}
		}
		st.newHead = nh
		m.pending[destFS] = true
		parent.busy++ // its directory must stay put while the data arrives
		head = nh
	}
	if st.newHead == nil {
		st.head = head
		head.busy++
	}
	s := m.newDataset(snapLeaf, Snapshot, head, head.pool)
	s.creation = b.Creation
	s.local[guidKey] = strconv.FormatUint(b.GUID, 10)
	if typ == Volume {
		s.local["volsize"] = strconv.FormatInt(b.Volsize, 10)
	}
	for k, v := range b.SnapProps {
		s.recvd[k] = v
	}
	st.snap = s
	st.snapPath = m.dataPath(s)
	st.stage = filepath.Join(m.dir, "trash", fmt.Sprintf("stage-%016x", s.guid))
	m.pending[destSnap] = true
	m.inflight.Add(1)
	return st, nil
}

// receiveData writes the stream's data records into the snapshot's place.
func (m *Model) receiveData(sr *streamReader, st *recvState) error {
	var sink dataSink
	if st.typ == Volume {
		f, err := os.OpenFile(st.snapPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return errIO("cannot receive", err)
		}
		if vs, _ := strconv.ParseInt(st.snap.local["volsize"], 10, 64); vs > 0 {
			if err := f.Truncate(vs); err != nil {
				f.Close()
				return errIO("cannot receive", err)
			}
		}
		sink = &volSink{f: f}
	} else {
		if err := os.MkdirAll(st.snapPath, 0o755); err != nil {
			return errIO("cannot receive", err)
		}
		sink = newDirSink(st.snapPath)
	}
	// Space is charged as the data arrives, as OpenZFS does: a stream
	// larger than what the destination may still use (pool free space,
	// the quotas of it and its ancestors) fails part-way with ENOSPC.
	m.mu.Lock()
	room := m.dirAvail(st.spaceOwner())
	m.unlock()
	var written int64
	for {
		kind, payload, err := sr.next()
		if err != nil {
			_ = sink.finish()
			st.short = true
			return newErr(KindBadStream, "cannot receive: failed to read from stream")
		}
		switch kind {
		case 'D':
			if written += int64(len(payload)); written > room {
				_ = sink.finish()
				return newErr(KindOutOfSpace, "%s: out of space", st.prefix)
			}
			if err := sink.write(payload); err != nil {
				_ = sink.finish()
				return errIO("cannot receive", err)
			}
			if st.spool != nil {
				st.spool.record(payload)
			}
		case 'E':
			if err := sink.finish(); err != nil {
				return newErr(KindBadStream, "cannot receive: invalid stream (%v)", err)
			}
			return nil
		default:
			_ = sink.finish()
			return newErr(KindBadStream, "cannot receive: invalid stream (unexpected record)")
		}
	}
}

// finishReceive links the received snapshot and swaps in the new data.
func (m *Model) finishReceive(st *recvState, b streamBegin, opts ReceiveOptions, recvErr error) error {
	m.mu.Lock()
	defer m.unlock()
	delete(m.pending, st.destSnap)
	delete(m.pending, st.destFS)
	if st.head != nil {
		st.head.busy--
	}
	if st.newHead != nil {
		st.newHead.parent.busy--
	}
	fail := func(err error) error {
		_ = os.RemoveAll(st.snapPath)
		_ = os.RemoveAll(st.stage)
		if st.spool != nil {
			st.spool.discard()
		}
		return err
	}
	if recvErr != nil && st.short && st.spool != nil && !m.closed {
		_ = os.RemoveAll(st.snapPath)
		_ = os.RemoveAll(st.stage)
		if err := m.savePartial(st, st.hdr, b); err != nil {
			st.spool.discard()
			return recvErr
		}
		return partialSaved(st.prefix, resumeToken(st.newHead))
	}
	if recvErr != nil {
		return fail(recvErr)
	}
	if st.spool != nil {
		st.spool.discard()
		st.spool = nil
	}
	if m.closed {
		return fail(errClosed)
	}
	head := st.head
	if head != nil && m.byGUID[head.guid] == nil {
		return fail(newErr(KindNotFound, "cannot receive: destination '%s' was destroyed", st.destFS))
	}
	if nh := st.newHead; nh != nil {
		if m.lookup(st.destFS) != nil || m.byGUID[nh.parent.guid] == nil {
			return fail(newErr(KindExists, "cannot receive new filesystem stream: destination '%s' exists", st.destFS))
		}
		head = nh
		nh.full = nh.computeName()
		_ = os.RemoveAll(m.dataPath(nh))
	}
	if err := m.swapData(head, st.stage); err != nil {
		return fail(errIO("cannot receive", err))
	}
	if b.Props != nil {
		head.recvd = map[string]string{}
		for k, v := range b.Props {
			if !excluded(opts.Exclude, k) {
				head.recvd[k] = v
			}
		}
	}
	for k, v := range opts.Props {
		head.local[k] = v
	}
	if head.typ == Volume && b.Volsize > 0 {
		head.local["volsize"] = strconv.FormatInt(b.Volsize, 10)
	}
	st.snap.refer = m.measureCopy(copyJob{dst: st.snapPath, dir: st.typ == Filesystem})
	st.snap.full = st.snap.computeName()
	if err := m.writeRecord(head); err != nil {
		return err
	}
	if err := m.writeRecord(st.snap); err != nil {
		return err
	}
	m.spaceMu.Lock()
	if st.newHead != nil {
		m.index(head)
		head.sp.data = m.measure(head)
		m.attachSpace(head)
	} else {
		head.sp.data = m.measure(head)
		m.propagate(head)
	}
	m.index(st.snap)
	m.attachSpace(st.snap)
	m.spaceMu.Unlock()
	if !opts.NoMount {
		m.remount(head)
	}
	return nil
}

// swapData replaces a head's data with the staged copy: a zvol file is
// renamed over; a directory is emptied (child mountpoints stay) and refilled.
func (m *Model) swapData(head *dataset, stage string) error {
	dst := m.dataPath(head)
	if head.typ == Volume {
		return os.Rename(stage, dst)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	keep := childDirNames(head)
	if err := clearDir(dst, keep); err != nil {
		return err
	}
	ents, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if keep[e.Name()] {
			continue
		}
		if err := os.Rename(filepath.Join(stage, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	if st, err := os.Stat(stage); err == nil {
		_ = os.Chmod(dst, st.Mode().Perm())
	}
	return os.RemoveAll(stage)
}

func excluded(list []string, k string) bool {
	for _, x := range list {
		if p := lookupProp(x); p != nil {
			x = p.name
		}
		if x == k {
			return true
		}
	}
	return false
}

// drain reads one snapshot's records without storing them (receive -n).
func drain(sr *streamReader) error {
	for {
		kind, _, err := sr.next()
		if err != nil {
			return newErr(KindBadStream, "cannot receive: failed to read from stream")
		}
		if kind == 'E' {
			return nil
		}
	}
}
