package dirvol

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Layout under controllerBasePath (democratic-csi compatible, plus
// switchyard's own metadata, which democratic-csi does not have):
//
//	v/<volume id>/                  a volume
//	s/<snapshot dir>/               a filecopy snapshot
//	v/.tmp-<id>, s/.tmp-<id>        a copy being built (renamed into place when complete)
//	v/.del-<id>, s/.del-<id>        a directory being removed
//	.switchyard/volumes/<id>.json   volumeMeta
//	.switchyard/snapshots/<id>.json snapshotMeta
const (
	volumesDir   = "v"
	snapshotsDir = "s"
	metaDir      = ".switchyard"
	tmpPrefix    = ".tmp-"
	delPrefix    = ".del-"
)

// volumeMeta is what switchyard records about a volume it made. A volume
// without it (made by democratic-csi) has an unknown capacity (0).
type volumeMeta struct {
	Name          string         `json:"name,omitempty"` // CreateVolume name ("" when unknown)
	CapacityBytes int64          `json:"capacityBytes"`
	Source        *contentSource `json:"contentSource,omitempty"`
	CreatedAt     time.Time      `json:"createdAt"`
}

// contentSource is the volume a clone or the snapshot a restore came from,
// with the id as the request gave it.
type contentSource struct {
	Type string `json:"type"` // "volume" or "snapshot"
	ID   string `json:"id"`
}

// snapshotMeta is what switchyard records about a snapshot it cut.
type snapshotMeta struct {
	Name           string    `json:"name"`
	SourceVolumeID string    `json:"sourceVolumeId"`
	CreatedAt      time.Time `json:"createdAt"`
	SizeBytes      int64     `json:"sizeBytes"`
}

// store resolves paths under the controller base directory. Every id it is
// given must have passed safeComponent.
type store struct {
	base  string
	cache *metaCache // nil: every read goes to the file
}

func (s store) volumePath(id string) string { return filepath.Join(s.base, volumesDir, id) }
func (s store) snapshotPath(dir string) string {
	return filepath.Join(s.base, snapshotsDir, dir)
}
func (s store) volumeMetaPath(id string) string {
	return filepath.Join(s.base, metaDir, "volumes", id+".json")
}
func (s store) snapshotMetaPath(dir string) string {
	return filepath.Join(s.base, metaDir, "snapshots", dir+".json")
}

// isDir reports whether path is a directory (not following a final
// symlink: a symlink under v/ or s/ could point outside the base).
func isDir(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// readJSON decodes path into v; found is false when the file does not exist.
func readJSON(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("metadata file %s is corrupt: %w", path, err)
	}
	return true, nil
}

// writeJSON replaces path atomically: the data is written and synced to a
// temporary file in the same directory, which is then renamed over path.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) { // the first file: make the directory
		if err = mkdirAllDurable(dir); err == nil {
			f, err = os.CreateTemp(dir, tmpPrefix+"*")
		}
	}
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// removeFile removes path; a missing file is not an error.
func removeFile(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// syncDir makes a directory's entries (a rename, a mkdir, a new file in
// it) durable. Direct system calls: os.Open would also register the
// descriptor with the network poller (one failing epoll_ctl per call).
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	err = unix.Fsync(fd)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		return &fs.PathError{Op: "close", Path: dir, Err: cerr}
	}
	if err != nil {
		return &fs.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

func (s store) readVolumeMeta(id string) (*volumeMeta, error) {
	if s.cache != nil {
		return s.cache.read(s, id)
	}
	var m volumeMeta
	found, err := readJSON(s.volumeMetaPath(id), &m)
	if err != nil || !found {
		return nil, err
	}
	return &m, nil
}

func (s store) readSnapshotMeta(dir string) (*snapshotMeta, error) {
	var m snapshotMeta
	found, err := readJSON(s.snapshotMetaPath(dir), &m)
	if err != nil || !found {
		return nil, err
	}
	return &m, nil
}
