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

// SendOptions are zfs send's flags.
type SendOptions struct {
	From          string // -i/-I: "@snap", "snap" or "fs@snap"
	Intermediates bool   // -I: also the snapshots between From and the target
	Replicate     bool   // -R: the dataset, its descendants, all snapshots up to the target, properties
	Props         bool   // -p: include dataset properties
}

// sendItem is one snapshot to put on the stream.
type sendItem struct {
	snap  *dataset
	begin streamBegin
}

// Send writes a stream of snapshot snap to w (zfs send). Warnings (for
// descendants without the snapshot under -R) go to warn when not nil.
func (m *Model) Send(w io.Writer, snap string, opts SendOptions, warn io.Writer) error {
	items, top, err := m.planSend(snap, opts, warn)
	if err != nil {
		return err
	}
	defer func() {
		m.mu.Lock()
		for _, it := range items {
			it.snap.busy--
		}
		m.mu.Unlock()
		m.inflight.Done()
	}()
	bw := bufio.NewWriterSize(w, 1<<16)
	sw := &streamWriter{w: bw}
	if _, err := bw.WriteString(streamMagic); err != nil {
		return err
	}
	if err := sw.json('H', streamHeader{Tool: "switchyard zfsmodel", TopLevel: top, Replicate: opts.Replicate}); err != nil {
		return err
	}
	for _, it := range items {
		if err := sw.json('B', it.begin); err != nil {
			return err
		}
		var err error
		if it.begin.Type == "volume" {
			err = writeVolData(sw, m.dataPath(it.snap))
		} else {
			err = writeDirData(sw, m.dataPath(it.snap))
		}
		if err != nil {
			return fmt.Errorf("cannot send '%s': %w", it.begin.Name, err)
		}
		if err := sw.record('E', nil); err != nil {
			return err
		}
	}
	if err := sw.record('Z', nil); err != nil {
		return err
	}
	return bw.Flush()
}

// planSend resolves what to send under the lock and marks it busy.
func (m *Model) planSend(snap string, opts SendOptions, warn io.Writer) ([]sendItem, string, error) {
	if err := m.begin(); err != nil {
		return nil, "", err
	}
	defer m.mu.Unlock()
	d, err := m.open(snap, AnyType)
	if err != nil {
		return nil, "", err
	}
	if !d.isSnap() {
		if opts.Replicate || opts.Intermediates {
			return nil, "", newErr(KindInvalid, "Error: Unsupported flag with filesystem or bookmark.")
		}
		return nil, "", newErr(KindNotSupported, "cannot send '%s': sending a filesystem's live state is not modelled; send a snapshot", snap)
	}
	head := d.parent
	from := opts.From
	if from != "" && !strings.Contains(from, "@") {
		from = "@" + from
	}
	if strings.HasPrefix(from, "@") {
		from = head.full + from
	}
	var fromSnap *dataset
	if from != "" {
		if fromSnap, err = m.open(from, Snapshot); err != nil {
			return nil, "", err
		}
		earlier := fromSnap.parent == head && fromSnap.txg < d.txg || fromSnap == head.origin
		if !earlier {
			return nil, "", newErr(KindInvalid, "warning: cannot send '%s': not an earlier snapshot from the same fs", d.full)
		}
	}
	var items []sendItem
	add := func(s *dataset, fromGUID uint64, rel string) {
		b := streamBegin{
			Name: s.full, Type: s.parent.typ.String(), GUID: snapGUID(s), FromGUID: fromGUID,
			Creation: s.creation, SnapProps: userLocal(s),
		}
		if s.parent.typ == Volume {
			b.Volsize, _ = strconv.ParseInt(s.local["volsize"], 10, 64)
			b.Blocksize = volBlockSize(s.parent)
		}
		if opts.Props || opts.Replicate {
			b.Props = sendProps(s.parent)
		}
		items = append(items, sendItem{snap: s, begin: b})
	}
	// chain lists the snapshots of x to send, oldest first, ending at the
	// one named like the target.
	chain := func(x *dataset, to *dataset, fromS *dataset) {
		var prev uint64
		start := 0
		if fromS != nil {
			prev = snapGUID(fromS)
			for i, s := range x.snaps {
				if s == fromS {
					start = i + 1
				}
			}
		}
		for _, s := range x.snaps[start:] {
			if s.txg > to.txg {
				break
			}
			if s == to || opts.Replicate && fromS == nil || opts.Intermediates {
				add(s, prev, "")
				prev = snapGUID(s)
			}
		}
	}
	if opts.Replicate {
		walk(head, func(x *dataset) {
			if x.isSnap() {
				return
			}
			to := x.snapshot(d.leaf)
			if to == nil {
				if warn != nil {
					fmt.Fprintf(warn, "WARNING: could not send %s@%s: does not exist\n", x.full, d.leaf)
				}
				return
			}
			var fs *dataset
			if fromSnap != nil {
				fs = x.snapshot(fromSnap.leaf)
			}
			chain(x, to, fs)
		})
	} else if opts.Intermediates && fromSnap != nil {
		chain(head, d, fromSnap)
	} else {
		var fg uint64
		if fromSnap != nil {
			fg = snapGUID(fromSnap)
		}
		add(d, fg, "")
	}
	for _, it := range items {
		it.snap.busy++
	}
	m.inflight.Add(1)
	return items, head.full, nil
}

// snapGUID is a snapshot's guid property: the sender's for received ones.
func snapGUID(s *dataset) uint64 {
	if v, ok := s.local[guidKey]; ok {
		n, _ := strconv.ParseUint(v, 10, 64)
		return n
	}
	return s.guid
}

// guidKey keeps a received snapshot's guid (the sender's) among its
// local values; the model's own identity stays unique.
const guidKey = "\x00guid"

func userLocal(d *dataset) map[string]string {
	out := map[string]string{}
	for k, v := range d.local {
		if isUserProp(k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sendProps are the properties zfs send -p carries: those set locally or
// received, except the ones tied to the volume layout.
func sendProps(d *dataset) map[string]string {
	out := map[string]string{}
	for _, mp := range []map[string]string{d.recvd, d.local} {
		for k, v := range mp {
			if k == "volsize" || k == "volblocksize" || strings.HasPrefix(k, "\x00") || v == inheritMarker {
				continue
			}
			out[k] = v
		}
	}
	return out
}

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
}

// Receive reads a stream made by Send and creates what it carries under
// target (zfs receive).
func (m *Model) Receive(r io.Reader, target string, opts ReceiveOptions) error {
	sr := &streamReader{r: bufio.NewReaderSize(r, 1<<16)}
	magic := make([]byte, len(streamMagic))
	if _, err := io.ReadFull(sr.r, magic); err != nil {
		return newErr(KindBadStream, "cannot receive: failed to read from stream")
	}
	if string(magic) != streamMagic {
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
}

func (m *Model) prepareReceive(b streamBegin, typ Type, destFS, destSnap, snapLeaf string, full bool, prefix string, opts ReceiveOptions) (*recvState, error) {
	if err := m.begin(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	if aux := nameCheck(destSnap, Snapshot, true); aux != "" {
		return nil, newErr(KindInvalid, "cannot receive: %s", aux)
	}
	st := &recvState{destFS: destFS, destSnap: destSnap, typ: typ}
	head := m.lookup(destFS)
	if m.pending[destFS] || m.pending[destSnap] {
		return nil, newErr(KindBusy, "%s: dataset is busy", prefix)
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
		nh := m.newDataset(leafOf(destFS), typ, parent, parent.pool)
		if typ == Volume {
			nh.local["volsize"] = strconv.FormatInt(b.Volsize, 10)
			if b.Blocksize != 0 && b.Blocksize != 16384 {
				nh.local["volblocksize"] = strconv.FormatInt(b.Blocksize, 10)
			}
		}
		st.newHead = nh
		m.pending[destFS] = true
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
	for {
		kind, payload, err := sr.next()
		if err != nil {
			_ = sink.finish()
			return newErr(KindBadStream, "cannot receive: failed to read from stream")
		}
		switch kind {
		case 'D':
			if err := sink.write(payload); err != nil {
				_ = sink.finish()
				return errIO("cannot receive", err)
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
	defer m.mu.Unlock()
	delete(m.pending, st.destSnap)
	delete(m.pending, st.destFS)
	if st.head != nil {
		st.head.busy--
	}
	fail := func(err error) error {
		_ = os.RemoveAll(st.snapPath)
		_ = os.RemoveAll(st.stage)
		return err
	}
	if recvErr != nil {
		return fail(recvErr)
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
		if p := lookupProp(k); p != nil {
			k = p.name
		}
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
