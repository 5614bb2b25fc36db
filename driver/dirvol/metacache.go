package dirvol

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// metaCache keeps the volume metadata files already read, each with the
// identity of the file it came from (inode, size, modification time in
// nanoseconds). A read is then one stat instead of open, stat, read,
// close and a JSON decode: ValidateVolumeCapabilities and
// ControllerGetVolume, which sidecars call often, cost a fraction. Any
// change of the file (writeJSON renames a new inode over it, an edit
// changes its size or time) misses the cache, so what is returned is
// always what the file holds.
type metaCache struct{ m sync.Map } // volume id -> cachedMeta

type cachedMeta struct {
	ino, size int64
	mtime     int64
	meta      volumeMeta
}

func fileKey(fi fs.FileInfo) (ino, size, mtime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return int64(st.Ino), fi.Size(), fi.ModTime().UnixNano(), true
}

// read returns the metadata of volume id (nil when the file does not
// exist), from the cache when the file is unchanged.
func (c *metaCache) read(s store, id string) (*volumeMeta, error) {
	path := s.volumeMetaPath(id)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.m.Delete(id)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ino, size, mtime, ok := fileKey(fi)
	if ok {
		if v, hit := c.m.Load(id); hit {
			if e := v.(*cachedMeta); e.ino == ino && e.size == size && e.mtime == mtime {
				m := e.meta // a copy: callers may change theirs
				return &m, nil
			}
		}
	}
	var m volumeMeta
	found, err := readJSON(path, &m)
	if err != nil || !found {
		return nil, err
	}
	if ok {
		c.m.Store(id, &cachedMeta{ino: ino, size: size, mtime: mtime, meta: m})
	}
	return &m, nil
}

// forget drops a deleted volume's entry.
func (c *metaCache) forget(id string) { c.m.Delete(id) }
