package api

import (
	"context"
	"encoding/json"
	"errors"
)

// session returns the conn's login generation, logging in (and, on a new
// conn, configuring it) first if needed. One caller logs in while the
// others wait; a refused login is held by the auth gate, so waiting
// callers fail with it instead of trying again.
func (t *wsTransport) session(ctx context.Context, conn *wsConn, method string) (int64, error) {
	if g := conn.session.Load(); g != 0 {
		return g, nil
	}
	select {
	case conn.setup <- struct{}{}:
	case <-ctx.Done():
		return 0, t.c.cancelled(method, "waiting for the login", false, ctx.Err())
	}
	defer func() { <-conn.setup }()
	if g := conn.session.Load(); g != 0 {
		return g, nil
	}
	if err := t.loginOnce(ctx, conn, method); err != nil {
		return 0, err
	}
	if !conn.configured {
		t.configure(ctx, conn)
		conn.configured = true
	}
	g := conn.logins.Add(1)
	conn.session.Store(g)
	return g, nil
}

// loginOnce logs conn in unless a refusal is held, one lane at a time,
// so lanes dialed together cost a wrong password one login, not one each.
func (t *wsTransport) loginOnce(ctx context.Context, conn *wsConn, method string) error {
	select {
	case t.logins <- struct{}{}:
	case <-ctx.Done():
		return t.c.cancelled(method, "waiting for the login", false, ctx.Err())
	}
	defer func() { <-t.logins }()
	if err := t.c.authGt.held(); err != nil {
		return err
	}
	if err := t.login(ctx, conn); err != nil {
		if errors.Is(err, ErrAuth) {
			t.c.authGt.refused(err)
			t.c.log.Warn("truenas login refused", "error", err.Error())
		}
		return err
	}
	t.c.authGt.accepted()
	return nil
}

// login authenticates conn: auth.login_ex when the server has it (and, for
// an API key, the key's user is known: login_ex requires it), else the
// legacy auth.login_with_api_key / auth.login.
func (t *wsTransport) login(ctx context.Context, conn *wsConn) error {
	st := t.c.st
	user := st.cfg.Username
	useEx := !t.loginExMissing.Load() && (!st.useAPIKey || user != "")

	if useEx {
		cred := map[string]any{"mechanism": "PASSWORD_PLAIN", "username": user, "password": st.cfg.Password}
		if st.useAPIKey {
			cred = map[string]any{"mechanism": "API_KEY_PLAIN", "username": user, "api_key": st.cfg.APIKey}
		}
		t.c.stats.logins.Add(1)
		res, err := t.rpc(ctx, conn, "auth.login_ex", []any{cred})
		switch {
		case err == nil:
			var r struct {
				ResponseType string `json:"response_type"`
			}
			if json.Unmarshal(res, &r) != nil || r.ResponseType == "" {
				return t.c.fail(ErrAuth, "auth.login_ex answered %.100s, not a login result", string(res))
			}
			if r.ResponseType == "SUCCESS" {
				return nil
			}
			return t.refused("auth.login_ex: " + r.ResponseType)
		case isMethodNotFound(err):
			t.loginExMissing.Store(true)
		default:
			return loginCallError(err)
		}
	}

	method, params := "auth.login", []any{user, st.cfg.Password}
	if st.useAPIKey {
		method, params = "auth.login_with_api_key", []any{st.cfg.APIKey}
	}
	t.c.stats.logins.Add(1)
	res, err := t.rpc(ctx, conn, method, params)
	switch {
	case err == nil:
		var ok bool
		if json.Unmarshal(res, &ok) != nil {
			return t.c.fail(ErrAuth, "%s answered %.100s, not true or false", method, string(res))
		}
		if ok {
			return nil
		}
		return t.refused(method + ": false")
	case isMethodNotFound(err) && st.useAPIKey && user == "":
		return t.c.fail(ErrAuth, "this server has no %s: set %s to the API key's user so auth.login_ex can be used", method, keyUsername)
	default:
		return loginCallError(err)
	}
}

// loginCallError: a server error answering a login is a refusal too
// (retrying cannot fix it); a connection failure stays what it is.
func loginCallError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &clientError{msg: err.Error() + " (login failed)", kinds: []error{ErrAuth, err}}
	}
	return err
}

// refused builds the ErrAuth for a login the server said no to.
func (t *wsTransport) refused(how string) error {
	st := t.c.st
	switch {
	case how == "auth.login_ex: OTP_REQUIRED":
		return t.c.fail(ErrAuth, "login as %q needs a two-factor code (%s); use an API key (%s) instead", st.cfg.Username, how, keyAPIKey)
	case st.useAPIKey:
		return t.c.fail(ErrAuth, "the API key was refused (%s): it is wrong, expired or revoked (TrueNAS 25.04.2 and later revoke a key "+
			"that was once sent without TLS); check %s", how, keyAPIKey)
	default:
		return t.c.fail(ErrAuth, "login as %q refused (%s): check %s and %s", st.cfg.Username, how, keyUsername, keyPassword)
	}
}

// configure runs once per new connection after the first login: learn the
// version (once per client) and, from 25.10, switch job methods to answer
// with their results. Failures only cost the optimisation: CallJob then
// polls.
func (t *wsTransport) configure(ctx context.Context, conn *wsConn) {
	v, ok := t.c.cachedVersion()
	if !ok {
		raw, err := t.rpc(ctx, conn, "system.version", nil)
		if err == nil {
			v, err = t.c.storeVersion(raw)
		}
		if err != nil {
			t.c.log.Warn("truenas system.version failed; job methods will be polled", "error", err.Error())
			return
		}
	}
	if !v.atLeast(versionDirectJobs) {
		return
	}
	if _, err := t.rpc(ctx, conn, "core.set_options", []any{map[string]any{"legacy_jobs": false}}); err != nil {
		t.c.log.Warn("truenas core.set_options(legacy_jobs=false) failed; job methods will be polled", "error", err.Error())
		return
	}
	conn.direct.Store(true)
}

// rpc is roundTrip for the client's own calls (login, setup): it waits out
// -32000 like user calls do, so a busy connection is not taken for a
// refused login.
func (t *wsTransport) rpc(ctx context.Context, conn *wsConn, method string, params []any) (json.RawMessage, error) {
	backoff := busyBackoffMin
	for {
		res, err := conn.roundTrip(ctx, method, params)
		if !isTooManyCalls(err) {
			return res, err
		}
		t.c.stats.busyRetries.Add(1)
		if err := sleepCtx(ctx, backoff); err != nil {
			return nil, t.c.cancelled(method, "waiting to resend after the server was busy", false, err)
		}
		backoff = min(2*backoff, busyBackoffMax)
	}
}
