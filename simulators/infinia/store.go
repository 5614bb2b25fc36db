package infinia

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// store persists the tree in <dir>/state.json (replaced atomically) with
// the changes since in <dir>/state.journal (journal.go), and the volumes'
// data in sparse files <dir>/volumes/<uuid>.img.
type store struct {
	dir string
}

func (s store) statePath() string { return filepath.Join(s.dir, "state.json") }

func (s store) volumesDir() string { return filepath.Join(s.dir, "volumes") }

// dataPath is the data file of a volume.
func (s store) dataPath(uuid string) string { return filepath.Join(s.volumesDir(), uuid+".img") }

// load reads the snapshot; ok is false when there is none yet.
func (s store) load() (st *state, ok bool, err error) {
	raw, err := os.ReadFile(s.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("infinia: reading the state: %w", err)
	}
	st, err = decodeState(raw)
	if err != nil {
		return nil, false, fmt.Errorf("infinia: %s is damaged: %w", s.statePath(), err)
	}
	return st, true, nil
}

func decodeState(raw []byte) (*state, error) {
	var st state
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	if st.Clusters == nil {
		st.Clusters = map[string]*cluster{}
	}
	return &st, nil
}

// save writes the tree atomically (temporary file, rename) as the
// snapshot.
//
// Durability: the tree must survive the simulator's process (Close and
// New again, a killed child, a crash of the simulator), not the machine:
// the rename is atomic for every reader after the write(2) returned, so a
// state.json is always a whole tree, old or new, without an fsync. An
// fsync per change was two thirds of save's cost on tmpfs and far more on
// a disk, under the lock every change holds (as the TrueNAS simulator's
// sharing tables chose, docs/performance.md "fifth round"). The encoding
// is compact JSON: indenting cost more than the encoding itself, and
// load reads either form.
func (s store) save(st *state) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("infinia: encoding the state: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".state-*.json")
	if err != nil {
		return fmt.Errorf("infinia: saving the state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.statePath())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("infinia: saving the state: %w", err)
	}
	return nil
}

// createData makes a sparse data file of size bytes.
func (s store) createData(uuid string, size int64) error {
	f, err := os.OpenFile(s.dataPath(uuid), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// The first volume (or the directory was removed): make it then,
		// not with a stat per create.
		if err := os.MkdirAll(s.volumesDir(), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(s.dataPath(uuid), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.dataPath(uuid))
	}
	return err
}

// resizeData sets the size of a data file (sparse growth).
func (s store) resizeData(uuid string, size int64) error {
	return os.Truncate(s.dataPath(uuid), size)
}

func (s store) removeData(uuid string) error {
	err := os.Remove(s.dataPath(uuid))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// copyData makes dst a copy of src's data at size bytes, keeping holes:
// blocks of zeros are skipped, not written.
func (s store) copyData(src, dst string, size int64) error {
	in, err := os.Open(s.dataPath(src))
	if err != nil {
		return err
	}
	defer in.Close()
	if err := s.createData(dst, size); err != nil {
		return err
	}
	out, err := os.OpenFile(s.dataPath(dst), os.O_WRONLY, 0)
	if err != nil {
		_ = s.removeData(dst)
		return err
	}
	buf := make([]byte, 1<<20)
	var off int64
	for off < size {
		n, rerr := in.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n > 0 && !allZero(buf[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				out.Close()
				_ = s.removeData(dst)
				return err
			}
		}
		off += int64(n)
		if rerr == io.EOF || n == 0 {
			break
		}
		if rerr != nil {
			out.Close()
			_ = s.removeData(dst)
			return rerr
		}
	}
	if err := out.Close(); err != nil {
		_ = s.removeData(dst)
		return err
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// ensureData makes the data files match the tree after a crash between
// the two (or a StateDir copied without its files): a volume without its
// file gets an empty one of its size, a file of no volume is removed.
func (s store) ensureData(st *state) error {
	known := map[string]bool{}
	for _, cl := range st.Clusters {
		for _, tn := range cl.Tenants {
			for _, sub := range tn.Subtenants {
				for _, ds := range sub.Datasets {
					for _, v := range ds.Volumes {
						known[v.UUID+".img"] = true
						if _, err := os.Stat(s.dataPath(v.UUID)); errors.Is(err, fs.ErrNotExist) {
							if err := s.createData(v.UUID, v.size()); err != nil {
								return fmt.Errorf("infinia: data file of volume %s: %w", v.Name, err)
							}
						}
					}
				}
			}
		}
	}
	entries, err := os.ReadDir(s.volumesDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("infinia: %w", err)
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".img") && !known[name] {
			if err := os.Remove(filepath.Join(s.volumesDir(), name)); err != nil {
				return fmt.Errorf("infinia: removing the orphaned data file %s: %w", name, err)
			}
		}
	}
	return nil
}
