package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// authFailureHold is how long a refused login is remembered: calls in that
// window fail at once with the same error, so a wrong password costs the
// server a login every few seconds, not one per CSI call.
const authFailureHold = 3 * time.Second

// authState is the cached token and the login in flight, if any.
type authState struct {
	hold time.Duration

	mu        sync.Mutex
	token     string
	refreshAt time.Time // zero: refresh only when the server answers 401
	call      *loginCall
	failErr   error
	failUntil time.Time
}

// loginCall is one login that every caller needing a token waits for.
type loginCall struct {
	done  chan struct{}
	token string
	err   error
}

// token returns the cached token, logging in when there is none or it is
// about to expire.
func (c *Client) token(ctx context.Context) (string, error) {
	c.auth.mu.Lock()
	if t := c.auth.token; t != "" && (c.auth.refreshAt.IsZero() || time.Now().Before(c.auth.refreshAt)) {
		c.auth.mu.Unlock()
		return t, nil
	}
	return c.loginLocked(ctx)
}

// relogin replaces a token the server refused. When another caller has
// already replaced it, that newer token is used without a second login.
func (c *Client) relogin(ctx context.Context, stale string) (string, error) {
	c.auth.mu.Lock()
	if t := c.auth.token; t != "" && t != stale {
		c.auth.mu.Unlock()
		return t, nil
	}
	c.auth.token = ""
	return c.loginLocked(ctx)
}

// loginLocked joins the login in flight or starts one; it is called with
// c.auth.mu held and releases it.
func (c *Client) loginLocked(ctx context.Context) (string, error) {
	if c.auth.failErr != nil && time.Now().Before(c.auth.failUntil) {
		err := c.auth.failErr
		c.auth.mu.Unlock()
		return "", err
	}
	call := c.auth.call
	if call == nil {
		call = &loginCall{done: make(chan struct{})}
		c.auth.call = call
		// The login outlives the caller that started it: others wait for it.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.st.cfg.Timeout*time.Duration(len(c.st.endpoints)))
		go func() {
			defer cancel()
			c.finishLogin(lctx, call)
		}()
	}
	c.auth.mu.Unlock()
	select {
	case <-call.done:
		return call.token, call.err
	case <-ctx.Done():
		return "", fmt.Errorf("infinia: waiting for the login: %w", ctx.Err())
	}
}

func (c *Client) finishLogin(ctx context.Context, call *loginCall) {
	tok, lifetime, err := c.login(ctx)
	c.auth.mu.Lock()
	c.auth.call = nil
	if err == nil {
		c.auth.token, c.auth.failErr = tok, nil
		c.auth.refreshAt = time.Time{}
		if lifetime > 0 {
			// Refresh a little early, so a call is not refused on the way;
			// measured on our own clock from now, as the server's may differ.
			c.auth.refreshAt = time.Now().Add(lifetime - min(time.Minute, lifetime/5))
		}
	} else if StatusCode(err) == http.StatusUnauthorized || StatusCode(err) == http.StatusForbidden {
		c.auth.failErr, c.auth.failUntil = err, time.Now().Add(c.auth.hold)
	}
	c.auth.mu.Unlock()
	call.token, call.err = tok, err
	close(call.done)
}

// login asks for a token: GET /redapi/v1/auth_user with the credentials in
// headers.
func (c *Client) login(ctx context.Context) (string, time.Duration, error) {
	c.logins.Add(1)
	hdr := http.Header{}
	hdr.Set("user_id", c.st.cfg.User)
	hdr.Set("password", c.st.cfg.Password)
	hdr.Set("level", c.st.cfg.Level)
	var out struct {
		Token string `json:"token"`
	}
	if err := c.send(ctx, http.MethodGet, basePath+"/auth_user", hdr, nil, "", &out); err != nil {
		return "", 0, err
	}
	if out.Token == "" {
		return "", 0, fmt.Errorf("infinia %s: login as %s at %s: the answer carries no token", c.currentLabel(), c.st.cfg.User, c.st.cfg.Level)
	}
	c.log.Debug("logged in to Infinia", "endpoint", c.currentLabel(), "user", c.st.cfg.User, "level", c.st.cfg.Level)
	return out.Token, tokenLifetime(out.Token), nil
}

// tokenLifetime reads exp − iat from a JWT's payload without verifying it
// (only the server can), or 0 when it is not a JWT with both claims.
func tokenLifetime(tok string) time.Duration {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return 0
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return 0
	}
	var claims struct {
		Exp, Iat float64
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp <= claims.Iat || claims.Iat <= 0 {
		return 0
	}
	// A lifetime beyond time.Duration's ~292 years would convert to a
	// negative duration: treat it as no lifetime (refresh on 401).
	if claims.Exp-claims.Iat >= float64(math.MaxInt64)/float64(time.Second) {
		return 0
	}
	return time.Duration((claims.Exp - claims.Iat) * float64(time.Second))
}
