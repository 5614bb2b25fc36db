package infinia

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Stats are the server's counters since New (or ResetStats).
type Stats struct {
	// Requests counts routed requests by "METHOD template", the template
	// being the route relative to its innermost parent object, e.g.
	// "GET /auth_user", "POST /volumes", "PUT /volumes/{v}/expose",
	// "POST /subsystems/{name}/hosts", "GET /instances" (see the package
	// documentation for the full list).
	Requests map[string]int64
	// Statuses counts answers by HTTP status (dropped ones excluded).
	Statuses       map[int]int64
	Unrouted       int64 // requests for no route (404) or the wrong verb (405)
	Logins         int64 // tokens issued
	LoginFailures  int64 // refused logins
	Unauthorized   int64 // calls refused 401 for a missing, bad or expired token
	Forbidden      int64 // calls refused 403 (token of another tenant)
	Connections    int64 // TCP connections accepted
	TLSHandshakes  int64 // TLS handshakes completed (resumptions included)
	InjectedErrors int64 // 503s from Faults
	Dropped        int64 // connections closed by Faults.DropAfter
	Restarts       int64
}

// Total is the number of routed requests.
func (st Stats) Total() int64 {
	var n int64
	for _, v := range st.Requests {
		n += v
	}
	return n
}

type counters struct {
	mu       sync.Mutex
	requests map[string]int64
	statuses map[int]int64

	unrouted, logins, loginFailures, unauthorized, forbidden atomic.Int64
	connections, handshakes, injected, dropped, restarts     atomic.Int64
}

func (c *counters) init() {
	c.mu.Lock()
	c.requests, c.statuses = map[string]int64{}, map[int]int64{}
	c.mu.Unlock()
}

func (c *counters) request(key string) {
	c.mu.Lock()
	c.requests[key]++
	c.mu.Unlock()
}

func (c *counters) status(code int) {
	c.mu.Lock()
	c.statuses[code]++
	c.mu.Unlock()
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	c.mu.Lock()
	st := Stats{Requests: maps.Clone(c.requests), Statuses: maps.Clone(c.statuses)}
	c.mu.Unlock()
	st.Unrouted, st.Logins, st.LoginFailures = c.unrouted.Load(), c.logins.Load(), c.loginFailures.Load()
	st.Unauthorized, st.Forbidden = c.unauthorized.Load(), c.forbidden.Load()
	st.Connections, st.TLSHandshakes = c.connections.Load(), c.handshakes.Load()
	st.InjectedErrors, st.Dropped, st.Restarts = c.injected.Load(), c.dropped.Load(), c.restarts.Load()
	return st
}

// ResetStats sets every counter to zero (e.g. between the set-up and the
// measured part of a benchmark).
func (s *Server) ResetStats() {
	c := &s.stats
	c.init()
	for _, a := range []*atomic.Int64{&c.unrouted, &c.logins, &c.loginFailures, &c.unauthorized, &c.forbidden,
		&c.connections, &c.handshakes, &c.injected, &c.dropped, &c.restarts} {
		a.Store(0)
	}
}
