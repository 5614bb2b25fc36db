package truenas

import (
	"context"
	"sync"
)

// Transport names, as Record.Transport reports them.
const (
	transportREST      = "rest"
	transportWebSocket = "websocket"
	transportLegacy    = "legacy"
)

// session is one client's authentication state: a WebSocket connection's
// (JSON-RPC or legacy) or a single REST request's.
type session struct {
	srv       *Server
	transport string
	secure    bool // arrived over TLS
	remote    string

	mu         sync.Mutex
	user       string // "" until logged in
	cred       string // "LOGIN_PASSWORD" or "API_KEY"
	epoch      uint64 // the server's auth epoch at login (ExpireSessions bumps it)
	legacyJobs bool   // job calls answer their id (core.set_options can clear it)
	subs       map[string]string
	// event sends a job event ("added"/"changed") to the client; nil for
	// transports that have no events (REST).
	event func(msg, collection string, id int, fields map[string]any)
}

func newSession(s *Server, transport string, secure bool, remote string) *session {
	return &session{srv: s, transport: transport, secure: secure, remote: remote, legacyJobs: true, subs: map[string]string{}}
}

// login makes the session authenticated as user.
func (ss *session) login(user, cred string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.user, ss.cred, ss.epoch = user, cred, ss.srv.authEpoch.Load()
}

func (ss *session) logout() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.user, ss.cred = "", ""
}

// identity is the logged-in user ("" when not authenticated, or when the
// login predates ExpireSessions).
func (ss *session) identity() (user, cred string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.user == "" || ss.epoch != ss.srv.authEpoch.Load() {
		return "", ""
	}
	return ss.user, ss.cred
}

func (ss *session) setLegacyJobs(v bool) {
	ss.mu.Lock()
	ss.legacyJobs = v
	ss.mu.Unlock()
}

func (ss *session) jobsAsIDs() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.legacyJobs
}

// subscribe records a subscription to collection under ident.
func (ss *session) subscribe(ident, collection string) {
	ss.mu.Lock()
	ss.subs[ident] = collection
	ss.mu.Unlock()
}

func (ss *session) unsubscribe(ident string) {
	ss.mu.Lock()
	delete(ss.subs, ident)
	ss.mu.Unlock()
}

func (ss *session) subscribed(collection string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, c := range ss.subs {
		if c == collection || c == "*" {
			return true
		}
	}
	return false
}

type sessionKey struct{}

// sessionOf is the session a builtin method (auth.*, core.*) runs for.
func sessionOf(ctx context.Context) *session {
	ss, _ := ctx.Value(sessionKey{}).(*session)
	return ss
}
