package zfs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Orphans: programs that may still run on the host after their session
// was lost (docs/performance.md, "What a real sshd does with a program
// whose connection dropped"). OpenSSH's sshd does not stop a session's
// command when the connection drops or the channel closes, and ignores a
// "signal" request for root logins ("session signalling requires
// privilege separation"): a program answered "may have run" can still be
// running, or only be starting, when the CO's retry of the call arrives on
// a new connection, and the two would race (a retried delete finishing
// before an orphaned create's `zfs create` runs leaves a volume nobody
// knows of).
//
// So every shell session carries a random id in its command line (`sh -s
// "$0" <id>`), which ps shows for as long as anything of the session runs:
// its programs run in its process group, and the session's `sh` ends right
// after the program it was running (its next write, the frame's end
// marker, meets the closed pipe). A session lost mid-program (any "may
// have run" answer) leaves its id here; before the executor runs anything
// else, fenceOrphans finds the session's process group with `ps -A -o
// pgid=,args=`, kills it (`kill -s KILL -- -<pgid>`) and waits until ps no
// longer lists it. Only then does the next program run, so a retry never
// overlaps what its first attempt left running. Nothing of this runs while
// no session was lost: the steady state pays nothing.
//
// Not covered: an exec (sessions off, or a run with a pty or stdin) has no
// id in its command line that would outlive the login shell's exec of its
// last command, so a lost exec is not fenced (its retry may overlap it);
// and a driver process that restarts forgets its orphans.

// orphanWaitMax bounds how long a run waits for the orphans to end before
// answering UNAVAILABLE (the CO retries later).
const orphanWaitMax = 30 * time.Second

// orphanSet is the ids of the shell sessions lost mid-program.
type orphanSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
	// fence serializes the fences: one run kills and waits, the others
	// then find the set empty.
	fence sync.Mutex
}

func (o *orphanSet) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil {
		o.ids = map[string]struct{}{}
	}
	o.ids[id] = struct{}{}
}

func (o *orphanSet) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.ids))
}

func (o *orphanSet) remove(ids []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range ids {
		delete(o.ids, id)
	}
}

func (o *orphanSet) empty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ids) == 0
}

// psOrphans is the command that lists the host's process groups.
const psOrphans = "ps -A -o pgid=,args="

// orphanGroups reads ps's output: the process groups that still have a
// process, being known (a group found earlier: its leader, the line with
// the id, may be gone while a child it could not kill runs on, such as a
// sudo'd zfs owned by root) or holding one of ids in a command line; and
// the ids no process holds any more.
func orphanGroups(ps string, ids []string, known map[int]bool) (pgids []int, gone []string) {
	seen := map[string]bool{}
	found := map[int]bool{}
	for _, l := range strings.Split(ps, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(f[0])
		if err != nil || pgid <= 1 {
			continue
		}
		hit := known[pgid]
		for _, id := range ids {
			if strings.Contains(l, id) {
				seen[id] = true
				hit = true
			}
		}
		if hit && !found[pgid] {
			found[pgid] = true
			pgids = append(pgids, pgid)
		}
	}
	for _, id := range ids {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	return pgids, gone
}

// fenceOrphans ends what lost shell sessions may still run on the host
// before anything else runs (see above).
func (s *SSH) fenceOrphans(ctx context.Context) error {
	if s.orphans.empty() {
		return nil
	}
	s.orphans.fence.Lock()
	defer s.orphans.fence.Unlock()
	deadline := time.Now().Add(orphanWaitMax)
	wait := 20 * time.Millisecond
	known := map[int]bool{}
	for {
		ids := s.orphans.list()
		if len(ids) == 0 && len(known) == 0 {
			return nil
		}
		out, err := s.dispatch(ctx, psOrphans, RunOptions{})
		if err != nil {
			return err
		}
		if out.Code != 0 {
			// No ps that takes POSIX options: the orphans cannot be
			// seen, so they are forgotten (and said so) rather than
			// blocking every call to this host.
			s.log.Warn("cannot list the host's processes to end commands of lost SSH sessions; a retried call may overlap them",
				"command", psOrphans, "exit", out.Code, "stderr", shortText([]byte(out.Stderr)))
			s.orphans.remove(ids)
			return nil
		}
		pgids, gone := orphanGroups(out.Stdout, ids, known)
		s.orphans.remove(gone)
		if len(pgids) == 0 {
			return nil
		}
		known = map[int]bool{}
		for _, g := range pgids {
			known[g] = true
		}
		if time.Now().After(deadline) {
			return newExecutorError(ErrConnectionLost, "ssh %s: a command of a lost shell session still runs on the host (process group %d, killed %s ago); the call is retried once it has ended",
				s.st.who, pgids[0], orphanWaitMax)
		}
		kill := []string{"kill", "-s", "KILL", "--"}
		for _, g := range pgids {
			kill = append(kill, "-"+strconv.Itoa(g))
		}
		s.log.Info("ending the commands of lost SSH shell sessions before the next command", "sessions", len(ids), "process groups", pgids)
		if _, err := s.dispatch(ctx, Line(kill...), RunOptions{}); err != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return cancelledError("ssh "+s.st.who, false, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// lostMidProgram: a run's error says its program may have run (and may
// still be running).
func lostMidProgram(err error, notRun bool) bool {
	return err != nil && !notRun && !errors.Is(err, ErrUnreachable) && !errors.Is(err, ErrAuth)
}
