package zfsmodel

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SendOptions are zfs send's flags.
type SendOptions struct {
	From          string // -i/-I: "@snap", "snap" or "fs@snap"
	Intermediates bool   // -I: also the snapshots between From and the target
	Replicate     bool   // -R: the dataset, its descendants, all snapshots up to the target, properties
	Props         bool   // -p: include dataset properties
	Resume        bool   // -t: a stream that continues a partial receive
	ResumeOffset  int64  // -t: leave out the data the partial receive has
	Raw           bool   // -w: send encrypted data as it is on disk (not modelled for encrypted datasets)
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
		m.unlock()
		m.inflight.Done()
	}()
	bw := bufio.NewWriterSize(w, 1<<16)
	sw := &streamWriter{w: bw, skip: opts.ResumeOffset}
	preamble := make([]byte, preambleLen)
	copy(preamble, streamMagic)
	if _, err := bw.Write(preamble); err != nil {
		return err
	}
	if err := sw.json('H', streamHeader{Tool: "switchyard zfsmodel", TopLevel: top, Replicate: opts.Replicate}); err != nil {
		return err
	}
	for _, it := range items {
		it.begin.Resumed, it.begin.ResumeOffset = opts.Resume, opts.ResumeOffset
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
	defer m.unlock()
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
	add := func(s *dataset, fromGUID uint64) {
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
		if opts.Raw && encrypted(s) {
			b.Crypt = m.streamCryptOf(s)
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
				add(s, prev)
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
		add(d, fg)
	}
	if err := m.sendCryptCheck(items, d, opts); err != nil {
		return nil, "", err
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
