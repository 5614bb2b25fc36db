package zfsmodel

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Open and Close.

// Open loads the model from opts.StateDir, creating the pools of opts.Pools
// that the state does not have yet.
func Open(opts Options) (*Model, error) {
	if opts.StateDir == "" {
		return nil, fmt.Errorf("zfsmodel: Options.StateDir is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Model{
		dir: opts.StateDir, opts: opts,
		pools: map[string]*pool{}, byName: map[string]*dataset{}, byGUID: map[uint64]*dataset{},
		mounts: map[string]*dataset{}, pending: map[string]bool{}, defaults: map[string]string{},
		keys: map[uint64]bool{},
	}
	for k, v := range opts.Defaults {
		p := lookupProp(k)
		if p == nil || p.readonly() && !p.setonce() || p.name == "volblocksize" {
			return nil, fmt.Errorf("zfsmodel: Options.Defaults: %q is not a native property whose default can change", k)
		}
		m.defaults[p.name] = v
	}
	for _, sub := range []string{"meta", "pools", "mnt", "zvols", "snaps", "trash"} {
		if err := os.MkdirAll(filepath.Join(m.dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("zfsmodel: %w", err)
		}
	}
	if err := os.RemoveAll(filepath.Join(m.dir, "trash")); err != nil {
		return nil, fmt.Errorf("zfsmodel: emptying trash: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(m.dir, "trash"), 0o755); err != nil {
		return nil, fmt.Errorf("zfsmodel: %w", err)
	}
	m.probeSpares(filepath.Join(m.dir, "trash", "probe"))
	if err := m.openJournal(); err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			m.j.f.Close()
		}
	}()
	if err := m.load(); err != nil {
		return nil, err
	}
	for _, ps := range opts.Pools {
		if aux := poolNameCheck(ps.Name); aux != "" {
			return nil, fmt.Errorf("zfsmodel: pool %q: %s", ps.Name, aux)
		}
		if ps.Size <= 0 {
			return nil, fmt.Errorf("zfsmodel: pool %q: size must be positive", ps.Name)
		}
		if p := m.pools[ps.Name]; p != nil {
			if p.size != ps.Size { // a pool may be grown (or shrunk) between runs
				p.size = ps.Size
				if err := m.writePool(p); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := m.createPool(ps); err != nil {
			return nil, err
		}
	}
	if err := m.flushJournal(m.j.queued); err != nil { // the pools just created
		return nil, err
	}
	m.spaceMu.Lock()
	m.rescanLocked()
	m.spaceMu.Unlock()
	for _, p := range m.pools {
		m.remount(p.root)
	}
	if opts.RescanInterval >= 0 {
		every := opts.RescanInterval
		if every == 0 {
			every = 2 * time.Second
		}
		m.stopScan, m.scanDone = make(chan struct{}), make(chan struct{})
		go m.scanLoop(every, m.stopScan, m.scanDone)
	}
	opened = true
	return m, nil
}

// Close waits for in-flight data copies and closes the model. The state is
// already on disk (every mutation is in the journal before it returns);
// Close applies the journal to the record files and empties it.
func (m *Model) Close() error {
	m.mu.Lock()
	already := m.closed
	m.closed = true
	m.mu.Unlock()
	if !already && m.stopScan != nil {
		close(m.stopScan)
		<-m.scanDone
	}
	m.inflight.Wait()
	return m.closeJournal()
}

var errClosed = newErr(KindIO, "zfsmodel: the model is closed")

func (m *Model) createPool(ps PoolSpec) error {
	p := &pool{name: ps.Name, size: ps.Size, guid: m.newGUID(), creation: m.now()}
	root := m.newDataset(ps.Name, Filesystem, nil, p)
	p.root = root
	if err := os.MkdirAll(m.fsDir(root), 0o755); err != nil {
		return fmt.Errorf("zfsmodel: pool %s: %w", ps.Name, err)
	}
	if err := m.writePool(p); err != nil {
		return err
	}
	m.pools[p.name] = p
	m.index(root)
	return m.writeRecord(root)
}
