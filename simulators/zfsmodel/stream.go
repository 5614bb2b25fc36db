package zfsmodel

import (
	"archive/tar"
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// The send stream format (this model's own; zfs receive refuses anything
// else): a 312-byte preamble (the magic, zero-padded to the size of a real
// stream's first record, so that short and foreign input fail as on real
// zfs), then records of [kind byte][uint32 length][payload]:
//
//	'H' header: JSON streamHeader
//	'B' begin of one snapshot: JSON streamBegin
//	'D' data: a filesystem's tar archive in pieces, or for a volume an
//	    8-byte offset followed by bytes at that offset (holes are skipped)
//	'E' end of that snapshot
//	'Z' end of the stream
const streamMagic = "SWZSTRM1"

// preambleLen is sizeof(dmu_replay_record_t): zfs receive first reads
// that much and reports a shorter input as "failed to read from stream".
const preambleLen = 312

const maxChunk = 1 << 20

type streamHeader struct {
	Tool      string `json:"tool"`
	TopLevel  string `json:"toplevel"`
	Replicate bool   `json:"replicate"`
}

type streamBegin struct {
	Name      string            `json:"name"` // source snapshot, full name
	Type      string            `json:"type"` // filesystem or volume
	GUID      uint64            `json:"guid"`
	FromGUID  uint64            `json:"fromguid,omitempty"`
	Creation  int64             `json:"creation"`
	Volsize   int64             `json:"volsize,omitempty"`
	Blocksize int64             `json:"volblocksize,omitempty"`
	Props     map[string]string `json:"props,omitempty"` // dataset properties (-p, -R)
	SnapProps map[string]string `json:"snapprops,omitempty"`
	// Crypt: a raw stream (zfs send -w) of an encrypted dataset carries
	// its encryption parameters (never a key).
	Crypt *streamCrypt `json:"crypt,omitempty"`
	// ResumeOffset: a stream made by zfs send -t; its data records start
	// this many payload bytes in.
	Resumed      bool  `json:"resumed,omitempty"`
	ResumeOffset int64 `json:"resumeoffset,omitempty"`
}

type streamWriter struct {
	w    *bufio.Writer
	skip int64 // data payload bytes still to leave out (zfs send -t)
}

func (s *streamWriter) record(kind byte, payload []byte) error {
	if kind == 'D' && s.skip > 0 {
		// The same snapshot makes the same records, so the receiver's
		// offset falls between two of them.
		if int64(len(payload)) > s.skip {
			return errors.New("the resume offset does not fall between two records")
		}
		s.skip -= int64(len(payload))
		return nil
	}
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := s.w.Write(h[:]); err != nil {
		return err
	}
	_, err := s.w.Write(payload)
	return err
}

func (s *streamWriter) json(kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.record(kind, b)
}

// Write makes the writer an io.Writer of 'D' records (for tar).
func (s *streamWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), maxChunk)
		if err := s.record('D', p[:k]); err != nil {
			return n, err
		}
		n, p = n+k, p[k:]
	}
	return n, nil
}

type streamReader struct{ r *bufio.Reader }

var errShort = errors.New("short stream")

func (s *streamReader) next() (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(s.r, h[:]); err != nil {
		return 0, nil, errShort
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxChunk+8 {
		return 0, nil, fmt.Errorf("record of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return 0, nil, errShort
	}
	return h[0], b, nil
}

// writeDirData sends a snapshot directory as a tar archive.
func writeDirData(s *streamWriter, dir string) error {
	tw := tar.NewWriter(s)
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		if !info.Mode().IsRegular() && !info.IsDir() && link == "" {
			return nil
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name = filepath.ToSlash(rel)
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
		}
		hdr.Uname, hdr.Gname = "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// writeVolData sends a zvol file's data extents.
func writeVolData(s *streamWriter, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	buf := make([]byte, maxChunk)
	emit := func(off, end int64) error {
		for off < end {
			n := int(min64(end-off, maxChunk-8))
			binary.BigEndian.PutUint64(buf[:8], uint64(off))
			r, err := f.ReadAt(buf[8:8+n], off)
			if r > 0 {
				if err := s.record('D', buf[:8+r]); err != nil {
					return err
				}
				off += int64(r)
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	var off int64
	for off < size {
		data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if err != nil {
			if errors.Is(err, unix.ENXIO) {
				return nil
			}
			return emit(off, size)
		}
		hole, err := unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			hole = size
		}
		if err := emit(data, hole); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// dataSink consumes 'D' records of one snapshot.
type dataSink interface {
	write(p []byte) error
	finish() error
}

type volSink struct{ f *os.File }

func (v *volSink) write(p []byte) error {
	if len(p) < 8 {
		return errors.New("bad volume record")
	}
	_, err := v.f.WriteAt(p[8:], int64(binary.BigEndian.Uint64(p[:8])))
	return err
}

func (v *volSink) finish() error { return v.f.Close() }

// dirSink unpacks the tar archive into a directory as the records arrive.
type dirSink struct {
	pw   *io.PipeWriter
	done chan error
}

func newDirSink(dir string) *dirSink {
	pr, pw := io.Pipe()
	d := &dirSink{pw: pw, done: make(chan error, 1)}
	go func() {
		err := untar(pr, dir)
		_, _ = io.Copy(io.Discard, pr)
		d.done <- err
	}()
	return d
}

func (d *dirSink) write(p []byte) error {
	_, err := d.pw.Write(p)
	return err
}

func (d *dirSink) finish() error {
	_ = d.pw.Close()
	return <-d.done
}

func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(hdr.Name) {
			return fmt.Errorf("unsafe path %q in stream", hdr.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(hdr.Linkname, p); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			continue
		}
		_ = os.Lchown(p, hdr.Uid, hdr.Gid)
		if hdr.Typeflag != tar.TypeSymlink {
			_ = os.Chmod(p, fs.FileMode(hdr.Mode)&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)|tarModeBits(hdr.Mode))
		}
	}
}

// tarModeBits converts tar's setuid/setgid/sticky bits to Go's.
func tarModeBits(mode int64) fs.FileMode {
	var m fs.FileMode
	if mode&04000 != 0 {
		m |= fs.ModeSetuid
	}
	if mode&02000 != 0 {
		m |= fs.ModeSetgid
	}
	if mode&01000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
