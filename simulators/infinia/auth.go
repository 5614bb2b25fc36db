package infinia

import (
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// login is GET /auth_user: headers user_id, password and level (the
// account's level, "<cluster>/<tenant>" for a tenant account) give a JWT.
func (s *Server) login(rq *request) (int, any, *apiError) {
	h := rq.r.Header
	user, password, level := h.Get("user_id"), h.Get("password"), h.Get("level")
	if user == "" || password == "" {
		s.stats.loginFailures.Add(1)
		return 0, nil, errorf(401, "the user_id and password headers are required")
	}
	s.mu.Lock()
	ok := false
	for _, a := range s.st.Accounts {
		// Compare every account, in constant time, so the answer's timing
		// says nothing about which part was wrong.
		match := subtle.ConstantTimeCompare([]byte(a.User), []byte(user)) &
			subtle.ConstantTimeCompare([]byte(a.Level), []byte(level)) &
			subtle.ConstantTimeCompare([]byte(a.Password), []byte(password))
		ok = ok || match == 1
	}
	s.mu.Unlock()
	if !ok {
		s.stats.loginFailures.Add(1)
		s.log.Info("login refused", "user", user, "level", level)
		return 0, nil, errorf(401, "invalid credentials for user %s at level %q", user, level)
	}
	now := s.now()
	tok := signJWT(*s.key.Load(), claims{Sub: user, Level: level, Iat: now.Unix(),
		Exp: expiry(now, s.opts.TokenTTL), JTI: hex.EncodeToString(randomBytes(8))})
	s.stats.logins.Add(1)
	s.log.Debug("login", "user", user, "level", level)
	return 200, map[string]string{"token": tok}, nil
}

// levelParams are the path wildcards of the levels, outermost first.
var levelParams = []string{"c", "t", "s"}

// authorize checks the bearer token and that its level covers the path:
// a token of clu1/red may touch /clusters/clu1/tenants/red/... and the
// cluster-wide routes of clu1 (instances, capacity_percent); anything
// else is 403.
func (s *Server) authorize(rq *request) *apiError {
	auth := rq.r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(auth, " ")
	if auth == "" || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		s.stats.unauthorized.Add(1)
		return errorf(401, "missing bearer token: log in with GET %s/auth_user", basePath)
	}
	c, err := s.tokens.verify(s.key.Load(), strings.TrimSpace(tok), s.now())
	if err != nil {
		s.stats.unauthorized.Add(1)
		if errors.Is(err, errExpiredToken) {
			return errorf(401, "token expired: log in again")
		}
		return errorf(401, "invalid token: log in again")
	}
	rq.claims = c
	for i, want := range splitLevel(c.Level) {
		if i >= len(levelParams) {
			break
		}
		got, ok := rq.params[levelParams[i]]
		if !ok && len(rq.params) == 1 { // a cluster-wide route of the token's cluster
			break
		}
		if !ok || got != want {
			s.stats.forbidden.Add(1)
			return errorf(http.StatusForbidden, "a token of level %s may not access %s", c.Level, rq.r.URL.Path)
		}
	}
	return nil
}
