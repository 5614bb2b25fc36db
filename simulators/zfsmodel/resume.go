package zfsmodel

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Resumable receive (zfs receive -s, zfs send -t, zfs receive -A), as
// OpenZFS does it for a full stream into a new dataset: a receive that
// loses its stream keeps what arrived; the dataset then exists with a
// receive_resume_token; `zfs send -t <token>` sends the rest and a
// `zfs receive -s` of that stream completes it; `zfs receive -A` discards
// it; any other stream into it is refused. (Resuming into an existing
// dataset, OpenZFS's hidden %recv clone, is not modelled: such a receive
// fails as without -s.)
//
// The model keeps the data records that arrived complete in a spool file
// beside the state (they are the stream's own bytes), and the token's
// offset counts their payload bytes. Resuming replays the spool and then
// reads the new stream, whose sender skipped that many payload bytes, so
// the receive itself runs as one uninterrupted full receive.

// resumeKey holds a partial dataset's resume state among its local values
// (persisted with it, like guidKey).
const resumeKey = "\x00resume"

// resumeState is what a partial receive saved.
type resumeState struct {
	Header streamHeader `json:"header"`
	Begin  streamBegin  `json:"begin"`
	Offset int64        `json:"offset"` // payload bytes of the spooled records
}

// tokenPayload is what the token carries to the sender.
type tokenPayload struct {
	ToName   string `json:"toname"`
	ToGUID   uint64 `json:"toguid"`
	FromGUID uint64 `json:"fromguid,omitempty"`
	Offset   int64  `json:"offset"`
}

// The token looks like OpenZFS's: <version>-<checksum>-<length>-<payload>,
// hexadecimal (the payload is this model's JSON, not a packed nvlist).
const tokenVersion = 1

func encodeToken(p tokenPayload) string {
	b, _ := json.Marshal(p)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%d-%x-%x-%s", tokenVersion, h.Sum64(), len(b), hex.EncodeToString(b))
}

func decodeToken(tok string) (tokenPayload, error) {
	var p tokenPayload
	parts := strings.SplitN(tok, "-", 4)
	if len(parts) != 4 {
		return p, errors.New("resume token is corrupt (invalid format)")
	}
	if parts[0] != fmt.Sprint(tokenVersion) {
		return p, fmt.Errorf("resume token is corrupt (invalid version %s)", parts[0])
	}
	b, err := hex.DecodeString(parts[3])
	h := fnv.New64a()
	_, _ = h.Write(b)
	if err != nil || fmt.Sprintf("%x", h.Sum64()) != parts[1] || fmt.Sprintf("%x", len(b)) != parts[2] {
		return p, errors.New("resume token is corrupt (payload checksum mismatch)")
	}
	if json.Unmarshal(b, &p) != nil || p.ToGUID == 0 || p.ToName == "" {
		return p, errors.New("resume token is corrupt")
	}
	return p, nil
}

// partialOf is d's saved resume state, nil when it has none.
func partialOf(d *dataset) *resumeState {
	v, ok := d.local[resumeKey]
	if !ok {
		return nil
	}
	var st resumeState
	if json.Unmarshal([]byte(v), &st) != nil {
		return nil
	}
	return &st
}

// resumeToken is d's receive_resume_token, "" when it has none.
func resumeToken(d *dataset) string {
	st := partialOf(d)
	if st == nil {
		return ""
	}
	return encodeToken(tokenPayload{ToName: st.Begin.Name, ToGUID: st.Begin.GUID, FromGUID: st.Begin.FromGUID, Offset: st.Offset})
}

func (m *Model) spoolPath(guid uint64) string {
	return filepath.Join(m.dir, "partial", fmt.Sprintf("%016x.spool", guid))
}

// dropPartial removes a destroyed dataset's spool.
func (m *Model) dropPartial(d *dataset) {
	if _, ok := d.local[resumeKey]; ok {
		_ = os.Remove(m.spoolPath(d.guid))
	}
}

// spooler copies the complete data records a resumable receive applies.
type spooler struct {
	f      *os.File
	w      *bufio.Writer
	offset int64
	err    error
}

func newSpooler(dir string) (*spooler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "recv-*.spool")
	if err != nil {
		return nil, err
	}
	return &spooler{f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

func (s *spooler) record(payload []byte) {
	if s.err != nil {
		return
	}
	var h [5]byte
	h[0] = 'D'
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := s.w.Write(h[:]); err != nil {
		s.err = err
		return
	}
	if _, err := s.w.Write(payload); err != nil {
		s.err = err
		return
	}
	s.offset += int64(len(payload))
}

// keep flushes the spool and moves it to dst.
func (s *spooler) keep(dst string) error {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	cerr := s.f.Close()
	if s.err != nil {
		_ = os.Remove(s.f.Name())
		return s.err
	}
	if cerr != nil {
		_ = os.Remove(s.f.Name())
		return cerr
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(s.f.Name(), dst)
}

func (s *spooler) discard() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
}

// savePartial links a new dataset whose stream broke off as a partial
// receive: listed, not mounted, with a resume token. Called under m.mu.
func (m *Model) savePartial(st *recvState, hdr streamHeader, b streamBegin) error {
	nh := st.newHead
	if m.lookup(st.destFS) != nil || m.byGUID[nh.parent.guid] == nil {
		return errors.New("destination changed")
	}
	rs := resumeState{Header: hdr, Begin: b, Offset: st.spool.offset}
	rs.Begin.Resumed, rs.Begin.ResumeOffset = false, 0
	v, _ := json.Marshal(rs)
	nh.local[resumeKey] = string(v)
	if err := st.spool.keep(m.spoolPath(nh.guid)); err != nil {
		return err
	}
	m.index(nh)
	if err := m.writeRecord(nh); err != nil {
		m.unindex(nh)
		_ = os.Remove(m.spoolPath(nh.guid))
		return err
	}
	m.spaceMu.Lock()
	m.attachSpace(nh)
	m.spaceMu.Unlock()
	return nil
}

// partialSaved is the message zfs receive -s prints when it keeps state.
func partialSaved(prefix, token string) *Error {
	return newErr(KindBadStream, "%s: checksum mismatch or incomplete stream.\nPartially received snapshot is saved.\n"+
		"A resuming stream can be generated on the sending system by running:\n    zfs send -t %s", prefix, token)
}

// resumeReceive continues a partial receive with a stream made by
// `zfs send -t`: the partial dataset gives way to a full receive that
// reads the spooled records first.
func (m *Model) resumeReceive(sr *streamReader, b streamBegin, target string, opts ReceiveOptions) error {
	destFS, _, _ := strings.Cut(target, "@")
	if err := m.begin(); err != nil {
		return err
	}
	d := m.lookup(destFS)
	var rs *resumeState
	if d != nil {
		rs = partialOf(d)
	}
	switch {
	case d == nil || rs == nil:
		m.unlock()
		return newErr(KindNotFound, "cannot receive resume stream: destination '%s' does not have any resumable receive state", destFS)
	case rs.Begin.GUID != b.GUID || rs.Offset != b.ResumeOffset:
		m.unlock()
		return newErr(KindInvalid, "cannot receive resume stream: the stream does not continue the partial receive of %s", destFS)
	case d.busy > 0 || m.pending[destFS]:
		m.unlock()
		return newErr(KindBusy, "cannot receive resume stream: dataset is busy")
	}
	spool, err := os.Open(m.spoolPath(d.guid))
	if err != nil {
		m.unlock()
		return errIO("cannot receive resume stream", err)
	}
	defer spool.Close()
	// The spool's directory entry goes with the dataset; the open file
	// stays readable. A second interruption spools everything again.
	trash, err := m.destroyOne(d)
	m.unlock()
	for _, x := range trash {
		_ = os.RemoveAll(x)
	}
	if err != nil {
		return err
	}
	joined := &streamReader{r: bufio.NewReaderSize(io.MultiReader(spool, sr.r), 1<<16)}
	opts.Resumable = true
	return m.receiveOne(joined, rs.Header, rs.Begin, target, opts)
}

// abortReceive is zfs receive -A: a partial new dataset is destroyed.
func (m *Model) abortReceive(name string) error {
	if err := m.begin(); err != nil {
		return err
	}
	d := m.lookup(name)
	if d == nil || partialOf(d) == nil {
		m.unlock()
		return newErr(KindNotFound, "'%s' does not have any resumable receive state to abort", name)
	}
	trash, err := m.destroyOne(d)
	m.unlock()
	for _, x := range trash {
		_ = os.RemoveAll(x)
	}
	return err
}

// ResumeSend resumes a send from a receive_resume_token (zfs send -t).
func (m *Model) ResumeSend(w io.Writer, token string) error {
	p, err := decodeToken(token)
	if err != nil {
		return newErr(KindInvalid, "cannot resume send: %v", err)
	}
	if err := m.beginRead(); err != nil {
		return err
	}
	var snap string
	for _, d := range m.byGUID {
		if d.isSnap() && snapGUID(d) == p.ToGUID {
			snap = d.full
			break
		}
	}
	m.mu.RUnlock()
	if snap == "" {
		return newErr(KindNotFound, "cannot resume send: '%s' used in the initial send no longer exists", p.ToName)
	}
	if p.FromGUID != 0 {
		return newErr(KindNotSupported, "cannot resume send: resuming an incremental send is not modelled")
	}
	return m.Send(w, snap, SendOptions{Resume: true, ResumeOffset: p.Offset}, nil)
}
