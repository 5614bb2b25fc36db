package synology

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
)

// commitLocked records the state for saving and, with a Kernel, makes it
// serve the change. The state file is written by flush once the NAS's lock
// is released: writing it under the lock made every request wait for the
// file system, so concurrent callers queued on the simulator rather than on
// the latency it models.
func (s *Server) commitLocked() error {
	raw, err := json.Marshal(s.st)
	if err != nil {
		s.log.Warn("saving state", "error", err)
		return fail(codeUnknown)
	}
	s.pending, s.pendingSeq = raw, s.pendingSeq+1
	if err := s.syncKernelLocked(); err != nil {
		s.log.Warn("kernel", "error", err)
		return fail(codeUnknown)
	}
	return nil
}

// flush writes the newest committed state to state.json unless another
// request is writing already: that writer looks again after it is done and
// writes what was committed meanwhile, so no request waits for another's
// write. Callers must not hold s.mu. Close writes what is left, so a
// restart on the state directory finds every answered change; a killed
// simulator may lose the last few.
func (s *Server) flush() {
	for {
		if !s.saveMu.TryLock() {
			return // the writer will see this state when it looks again
		}
		s.mu.Lock()
		raw, seq := s.pending, s.pendingSeq
		s.mu.Unlock()
		if seq != s.writtenSeq.Load() {
			if err := s.store.write(raw); err != nil {
				s.log.Warn("saving state", "error", err)
			} else {
				s.writtenSeq.Store(seq)
			}
		}
		s.saveMu.Unlock()
		s.mu.Lock()
		more := s.pendingSeq != s.writtenSeq.Load() && s.pending != nil
		s.mu.Unlock()
		if !more {
			return
		}
	}
}

// flushAll waits for a write in progress and writes the newest state.
func (s *Server) flushAll() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	raw, seq := s.pending, s.pendingSeq
	s.mu.Unlock()
	if seq == s.writtenSeq.Load() {
		return nil
	}
	if err := s.store.write(raw); err != nil {
		return err
	}
	s.writtenSeq.Store(seq)
	return nil
}

func (s *Server) syncKernel() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncKernelLocked()
}

// kernelState is what the kernel should serve: every target with its
// mapped LUNs (files), every share with NFS rules as an export at its
// DSM path (/volume1/<name>), every other share over SMB.
func (s *Server) kernelState() kernel.State {
	var ks kernel.State
	portals := s.opts.Portals
	if len(portals) == 0 {
		portals = []kernel.Portal{{Addr: "0.0.0.0", Port: 3260}}
	}
	for _, t := range s.st.Targets {
		kt := kernel.Target{IQN: t.IQN, Portals: portals}
		for _, m := range t.Mapped {
			if l := s.st.lunByUUID(m.LunUUID); l != nil && l.DeleteAt == 0 {
				kt.LUNs = append(kt.LUNs, kernel.LUN{LUN: m.Index, Path: s.store.lunFile(l.UUID), Serial: strings.ReplaceAll(l.UUID, "-", "")[:16]})
			}
		}
		if t.AuthType >= 1 {
			kt.CHAP = &kernel.CHAP{User: t.User, Secret: t.Password}
			if t.AuthType == 2 {
				kt.CHAP.MutualUser, kt.CHAP.MutualSecret = t.MutualUser, t.MutualPassword
			}
		}
		ks.ISCSI = append(ks.ISCSI, kt)
	}
	for _, sh := range s.st.Shares {
		dir := s.store.shareDir(sh.VolPath, sh.Name)
		if len(sh.NFSRules) > 0 {
			var clients []string
			for _, r := range sh.NFSRules {
				opts := []string{r.Privilege, "no_subtree_check"}
				switch r.RootSquash {
				case "no":
					opts = append(opts, "no_root_squash")
				case "all", "admin":
					opts = append(opts, "all_squash")
				default:
					opts = append(opts, "root_squash")
				}
				if r.Async {
					opts = append(opts, "async")
				} else {
					opts = append(opts, "sync")
				}
				if r.Insecure {
					opts = append(opts, "insecure")
				}
				// r.Crossmnt is kept in DSM's rule but not given to the
				// kernel: a simulated share is one directory with no file
				// system mounted below it (its snapshots are copies kept
				// elsewhere), so crossmnt would change nothing but the
				// bookworm VM's rpc.mountd (nfs-utils 2.6.2): with a
				// crossmnt export of a bind-mounted tmpfs directory it
				// segfaulted (NULL in libc) on the first client's upcall,
				// and every mount then hung without an answer (VM run
				// 2026-11-26 08:25, dmesg: "rpc.mountd[361]: segfault at 0").
				clients = append(clients, fmt.Sprintf("%s(%s)", r.Client, strings.Join(opts, ",")))
			}
			ks.NFS = append(ks.NFS, kernel.Export{Path: sh.VolPath + "/" + sh.Name, Source: dir, Options: strings.Join(clients, " ")})
			continue
		}
		ks.SMB = append(ks.SMB, kernel.Share{Name: sh.Name, Path: dir, Guest: len(sh.Permissions) == 0})
	}
	return ks
}

func (s *Server) syncKernelLocked() error {
	if s.opts.Kernel == nil {
		return nil
	}
	return s.opts.Kernel.Apply(s.opts.Owner, s.kernelState())
}
