package truenas

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
)

// Record is one method call as the server received it.
type Record struct {
	Transport string          // "rest", "websocket" (JSON-RPC) or "legacy"
	Method    string          // e.g. "pool.dataset.create"
	Params    json.RawMessage // the positional parameters (a JSON array), credentials masked
	User      string          // the authenticated user; "" before login
	Error     string          // the error's text; "" on success or while running
}

// recorder keeps the most recent records, in arrival order.
type recorder struct {
	mu   sync.Mutex
	max  int
	recs []*Record
}

// recording is a record being filled in.
type recording struct {
	r   *recorder
	rec *Record
}

func (r *recorder) start(transport, method string, params json.RawMessage, user string) recording {
	rec := &Record{Transport: transport, Method: method, Params: params, User: user}
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	if len(r.recs) > 2*r.max {
		r.recs = slices.Clone(r.recs[len(r.recs)-r.max:])
	}
	r.mu.Unlock()
	return recording{r: r, rec: rec}
}

func (g recording) finish(err error) {
	if err == nil {
		return
	}
	g.r.mu.Lock()
	g.rec.Error = err.Error()
	g.r.mu.Unlock()
}

// Calls returns the recorded calls (the most recent Options.MaxRecords),
// oldest first.
func (s *Server) Calls() []Record {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	recs := s.rec.recs
	if len(recs) > s.rec.max {
		recs = recs[len(recs)-s.rec.max:]
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = *r
		out[i].Params = slices.Clone(r.Params)
	}
	return out
}

// ResetCalls forgets the recorded calls.
func (s *Server) ResetCalls() {
	s.rec.mu.Lock()
	s.rec.recs = nil
	s.rec.mu.Unlock()
}

// Stats are the server's counters since New.
type Stats struct {
	Connections        int64 // TCP connections accepted (all transports)
	WebSocketSessions  int64 // JSON-RPC WebSocket connections
	LegacySessions     int64 // legacy /websocket connections
	Logins             int64 // successful logins (WebSocket) and authenticated REST requests
	LoginFailures      int64 // refused passwords and API keys, on every transport
	RevokedAPIKeys     int64 // API keys revoked for use over plain text
	RESTCalls          int64
	WebSocketCalls     int64
	LegacyCalls        int64
	RejectedCalls      int64 // -32000: too many concurrent calls
	DroppedConnections int64 // connections dropped by Faults.DropAfter
	Restarts           int64
}

type counters struct {
	connections, wsSessions, legacySessions, logins, loginFailures, revoked atomic.Int64
	restCalls, wsCalls, legacyCalls, rejected, dropped, restarts            atomic.Int64
}

func (c *counters) countCall(transport string) {
	switch transport {
	case transportREST:
		c.restCalls.Add(1)
	case transportWebSocket:
		c.wsCalls.Add(1)
	case transportLegacy:
		c.legacyCalls.Add(1)
	}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Connections: c.connections.Load(), WebSocketSessions: c.wsSessions.Load(), LegacySessions: c.legacySessions.Load(),
		Logins: c.logins.Load(), LoginFailures: c.loginFailures.Load(), RevokedAPIKeys: c.revoked.Load(),
		RESTCalls: c.restCalls.Load(), WebSocketCalls: c.wsCalls.Load(), LegacyCalls: c.legacyCalls.Load(),
		RejectedCalls: c.rejected.Load(), DroppedConnections: c.dropped.Load(), Restarts: c.restarts.Load(),
	}
}
