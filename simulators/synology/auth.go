package synology

import (
	"net/http"
	"time"
)

func init() {
	register("SYNO.API.Auth", "entry.cgi", 7, true, map[string]handler{"login": login, "logout": logout})
}

// login checks account/passwd and opens a session: its sid is returned in
// data (format=sid) and set as the cookie "id" (format=cookie, the
// default), as DSM does.
func login(s *Server, c *call) (any, error) {
	user, pass := c.str("account"), c.str("passwd")
	if user == "" {
		return nil, fail(codeNoParameter)
	}
	want, ok := s.opts.Users[user]
	if !ok || want != pass {
		s.log.Info("login refused", "account", user)
		return nil, fail(codeAuthBadPassword)
	}
	sid := newSID()
	s.sessions[sid] = &session{user: user, name: c.str("session"), lastUsed: s.now()}
	if c.str("format") != "sid" {
		// Secure only over https: the simulator also serves plain http,
		// as DSM does on port 5000.
		http.SetCookie(c.w, &http.Cookie{ //nolint:gosec // G124: see above
			Name: "id", Value: sid, Path: "/", HttpOnly: true, Secure: c.r.TLS != nil, SameSite: http.SameSiteStrictMode})
	}
	return map[string]any{"sid": sid, "did": "", "is_portal_port": false}, nil
}

// logout ends the session of the call's sid (or of the session name).
func logout(s *Server, c *call) (any, error) {
	sid := sidOf(c.r)
	if _, ok := s.sessions[sid]; !ok {
		return nil, fail(codeSIDNotFound)
	}
	delete(s.sessions, sid)
	return nil, nil
}

// checkSessionLocked returns the user of a live session: 119 for an
// unknown sid, 106 for one idle longer than SessionTTL (which is then
// forgotten).
func (s *Server) checkSessionLocked(sid string) (string, error) {
	ss, ok := s.sessions[sid]
	if sid == "" || !ok {
		return "", fail(codeSIDNotFound)
	}
	now := s.now()
	if now.Sub(ss.lastUsed) > s.opts.SessionTTL {
		delete(s.sessions, sid)
		return "", fail(codeSessionTimeout)
	}
	ss.lastUsed = now
	return ss.user, nil
}

// Sessions is the number of open sessions (tests).
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ss := range s.sessions {
		if time.Since(ss.lastUsed) <= s.opts.SessionTTL {
			n++
		}
	}
	return n
}
