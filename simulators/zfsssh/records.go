package zfsssh

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Record is one executed simple command, after the shell parsed it.
type Record struct {
	Conn    uint64   // connection number, from 1
	Session uint64   // session number within the connection, from 1
	User    string   // the SSH login
	Root    bool     // the shell that ran it had uid 0 (a sudo shows in Argv)
	Line    string   // the session's command line (exec) or interactive line
	Argv    []string // the command's arguments after quote removal and expansion
	Depth   int      // 0: the session's own shell; 1: inside one "sh -c", ...
	// Program is 0 for an exec's command line, n for the n-th program a
	// shell session read (one round trip each, like an exec).
	Program uint64
	Exit    int // exit status; -1 while running
}

// recorder keeps the most recent records, in start order.
type recorder struct {
	mu   sync.Mutex
	max  int
	recs []*Record
}

func (s *Server) startRecord(env *sessionEnv, argv []string, depth int, root bool) *Record {
	r := &Record{Conn: env.connID, Session: env.id, Program: env.program, User: env.user.name, Root: root, Line: env.line,
		Argv: slices.Clone(argv), Depth: depth, Exit: -1}
	s.rec.mu.Lock()
	s.rec.recs = append(s.rec.recs, r)
	if len(s.rec.recs) > 2*s.rec.max {
		s.rec.recs = slices.Clone(s.rec.recs[len(s.rec.recs)-s.rec.max:])
	}
	s.rec.mu.Unlock()
	return r
}

func (s *Server) finishRecord(r *Record, exit int) {
	s.rec.mu.Lock()
	r.Exit = exit
	s.rec.mu.Unlock()
}

// Commands returns the recorded commands, oldest first.
func (s *Server) Commands() []Record {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	recs := s.rec.recs
	if len(recs) > s.rec.max {
		recs = recs[len(recs)-s.rec.max:]
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = *r
		out[i].Argv = slices.Clone(r.Argv)
	}
	return out
}

// ResetCommands forgets the recorded commands.
func (s *Server) ResetCommands() {
	s.rec.mu.Lock()
	s.rec.recs = nil
	s.rec.mu.Unlock()
}

// Stats are the server's counters since New.
type Stats struct {
	Connections        int64 // authenticated connections
	AuthFailures       int64 // refused passwords and keys
	Sessions           int64 // session channels opened
	SessionsRejected   int64 // session opens refused because of MaxSessions
	MaxSessionsInUse   int64 // most concurrent sessions seen on one connection
	Keepalives         int64 // keepalive@openssh.com requests answered
	DroppedConnections int64 // connections dropped by Faults.DropAfter
	TargetcliRuns      int64
	TargetcliOverlaps  int64 // targetcli runs that started while another was running
	NvmetcliRuns       int64
	NvmetcliOverlaps   int64 // the same for nvmetcli
}

type counters struct {
	connections, authFailures, sessions, sessionsRejected, maxInUse, keepalives, dropped atomic.Int64
	targetcliRuns, targetcliOverlaps, targetcliActive                                    atomic.Int64
	nvmetcliRuns, nvmetcliOverlaps, nvmetcliActive                                       atomic.Int64
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Connections: c.connections.Load(), AuthFailures: c.authFailures.Load(),
		Sessions: c.sessions.Load(), SessionsRejected: c.sessionsRejected.Load(), MaxSessionsInUse: c.maxInUse.Load(),
		Keepalives: c.keepalives.Load(), DroppedConnections: c.dropped.Load(),
		TargetcliRuns: c.targetcliRuns.Load(), TargetcliOverlaps: c.targetcliOverlaps.Load(),
		NvmetcliRuns: c.nvmetcliRuns.Load(), NvmetcliOverlaps: c.nvmetcliOverlaps.Load(),
	}
}

// runGuard counts a run of a tool and whether it overlapped another run.
// The real tools do not serialise (targetcli's lock is taken after the
// preferences file is read), so overlaps are what a driver must avoid.
func runGuard(runs, overlaps, active *atomic.Int64) (done func()) {
	runs.Add(1)
	if active.Add(1) > 1 {
		overlaps.Add(1)
	}
	return func() { active.Add(-1) }
}

func raiseMax(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}
