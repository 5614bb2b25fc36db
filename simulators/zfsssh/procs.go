package zfsssh

import (
	"sort"
	"sync"
)

// procTable is the host's process groups as ps sees them: one per session
// whose command (an exec, a shell) is running. sshd makes each session's
// child a session and group leader (setsid), and the programs the command
// starts stay in its group, so a group stands for everything a session
// runs.
//
// An entry outlives its SSH connection. OpenSSH's sshd does not signal a
// session's child when the connection drops or the channel closes: it only
// closes the child's pipes, and the command runs on until it ends (or until
// it writes to a closed pipe and SIGPIPE ends it). Measured with Debian 12's
// OpenSSH 9.2 (docs/performance.md, "What a real sshd does with a program
// whose connection dropped"), for an exec and for a long-lived `sh -s`
// alike; so the simulator's programs run on too, and only a signal (the
// channel's "signal" request, `kill` of the group) or the host's shutdown
// (Server.Close) ends them early.
type procTable struct {
	mu   sync.Mutex
	next int
	m    map[int]*session
}

// procEntry is one process group: its leader's pid (= pgid), owner and
// command line.
type procEntry struct {
	pgid int
	user string
	args string
	s    *session
}

func (t *procTable) add(s *session) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int]*session{}
		t.next = 1000
	}
	t.next++
	t.m[t.next] = s
	return t.next
}

func (t *procTable) remove(pgid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, pgid)
}

// list returns the groups in pid order.
func (t *procTable) list() []procEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]procEntry, 0, len(t.m))
	for pgid, s := range t.m {
		out = append(out, procEntry{pgid: pgid, user: s.env.user.name, args: s.args, s: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pgid < out[j].pgid })
	return out
}

func (t *procTable) get(pgid int) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[pgid]
}
