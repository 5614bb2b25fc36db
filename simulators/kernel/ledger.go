package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// ledger records what the reconcilers made, so that an owner's objects
// can be removed later (also by another process) and shared objects are
// removed only when unused and only if a reconciler made them.
type ledger struct {
	// Owners is each owner's last applied State, without CHAP secrets.
	// After a failed Apply it is the union of the old and the new State,
	// so the next Apply removes whatever was left over.
	Owners map[string]State `json:"owners"`
	// Loops are the loop devices attached to regular files.
	Loops []loopDev `json:"loops,omitempty"`
	// Ports are the nvmet ports made for listeners: address key -> port id.
	Ports map[string]int `json:"ports,omitempty"`
	// Hosts are the nvmet host NQNs made (/hosts/<nqn>).
	Hosts []string `json:"hosts,omitempty"`
	// Mounts are the bind mounts made: mount point -> mount.
	Mounts map[string]bindMount `json:"mounts,omitempty"`

	loaded []byte // the file as read, to skip rewriting it unchanged
}

type loopDev struct {
	File   string `json:"file"`
	Device string `json:"device"`
}

type bindMount struct {
	Source  string `json:"source"`
	MadeDir bool   `json:"made_dir,omitempty"` // the mount point was created for it
}

// lockLedger takes the cross-process lock; the returned func releases it.
func (r *Reconciler) lockLedger() (func(), error) {
	if err := os.MkdirAll(r.o.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("kernel: state directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(r.o.StateDir, ledgerLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kernel: ledger lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("kernel: ledger lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func (r *Reconciler) loadLedger() (*ledger, error) {
	l := &ledger{}
	b, err := os.ReadFile(filepath.Join(r.o.StateDir, ledgerFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("kernel: ledger: %w", err)
	default:
		l.loaded = b
		if err := json.Unmarshal(b, l); err != nil {
			return nil, fmt.Errorf("kernel: ledger %s is damaged (%v); remove it and the objects it listed by hand", filepath.Join(r.o.StateDir, ledgerFile), err)
		}
	}
	if l.Owners == nil {
		l.Owners = map[string]State{}
	}
	if l.Ports == nil {
		l.Ports = map[string]int{}
	}
	if l.Mounts == nil {
		l.Mounts = map[string]bindMount{}
	}
	return l, nil
}

func (r *Reconciler) saveLedger(l *ledger) error {
	sort.Strings(l.Hosts)
	sort.Slice(l.Loops, func(i, j int) bool { return l.Loops[i].Device < l.Loops[j].Device })
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("kernel: ledger: %w", err)
	}
	b = append(b, '\n')
	if bytes.Equal(b, l.loaded) {
		return nil
	}
	tmp := filepath.Join(r.o.StateDir, ledgerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("kernel: ledger: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(r.o.StateDir, ledgerFile)); err != nil {
		return fmt.Errorf("kernel: ledger: %w", err)
	}
	l.loaded = b
	return nil
}

// withoutSecrets is what the ledger keeps of a State.
func withoutSecrets(s State) State {
	s.ISCSI = append([]Target(nil), s.ISCSI...)
	for i := range s.ISCSI {
		s.ISCSI[i].CHAP = nil
	}
	return s
}

// union is every object of a or b (b's version where both have it).
func union(a, b State) State {
	out := b
	nqn := map[string]bool{}
	for _, x := range b.NVMe {
		nqn[x.NQN] = true
	}
	for _, x := range a.NVMe {
		if !nqn[x.NQN] {
			out.NVMe = append(out.NVMe, x)
		}
	}
	iqn := map[string]bool{}
	for _, x := range b.ISCSI {
		iqn[x.IQN] = true
	}
	for _, x := range a.ISCSI {
		if !iqn[x.IQN] {
			out.ISCSI = append(out.ISCSI, x)
		}
	}
	exp := map[string]bool{}
	for _, x := range b.NFS {
		exp[x.Path] = true
	}
	for _, x := range a.NFS {
		if !exp[x.Path] {
			out.NFS = append(out.NFS, x)
		}
	}
	share := map[string]bool{}
	for _, x := range b.SMB {
		share[x.Name] = true
	}
	for _, x := range a.SMB {
		if !share[x.Name] {
			out.SMB = append(out.SMB, x)
		}
	}
	return out.normalize()
}
