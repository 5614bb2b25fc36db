package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Backoff for calls the server refused as too many at once (-32000): one
// of ours will finish soon.
const (
	busyBackoffMin = 10 * time.Millisecond
	busyBackoffMax = 200 * time.Millisecond
)

// errNoWebSocket: the server answered the handshake with an HTTP status:
// there is no JSON-RPC WebSocket at /api/current (TrueNAS before 25.04).
var errNoWebSocket = errors.New("no websocket at /api/current")

// wsTransport keeps the one WebSocket of a Client: made on first use,
// logged in, replaced when it dies.
type wsTransport struct {
	c *Client

	mu      sync.Mutex
	cur     *wsConn
	dialing *wsDial // the dial in progress, shared by every call waiting for it
	made    int     // connections made so far (to count reconnects)
	// life is cancelled by close, abandoning a dial in progress.
	life       context.Context
	cancelLife context.CancelFunc

	loginExMissing atomic.Bool // the server has no auth.login_ex: use the legacy logins
}

type wsDial struct {
	done chan struct{}
	conn *wsConn
	err  error
}

func newWSTransport(c *Client) *wsTransport {
	t := &wsTransport{c: c}
	t.life, t.cancelLife = context.WithCancel(context.Background())
	return t
}

func (t *wsTransport) name() string { return TransportWebSocket }

func (t *wsTransport) close() {
	t.mu.Lock()
	t.cancelLife()
	t.life, t.cancelLife = context.WithCancel(context.Background())
	t.dialing = nil
	cur := t.cur
	t.cur = nil
	t.mu.Unlock()
	if cur != nil {
		cur.kill(errors.New("client closed"))
	}
}

// handshake makes one WebSocket connection; it sends no credentials. A
// server without the endpoint gives an error matching errNoWebSocket.
func (t *wsTransport) handshake(ctx context.Context) (*websocket.Conn, error) {
	c := t.c
	ctx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
	defer cancel()
	// websocket.Dial closes the response body itself (its documentation:
	// "You never need to close resp.Body yourself").
	ws, resp, err := websocket.Dial(ctx, c.st.wsURL(), &websocket.DialOptions{ //nolint:bodyclose // see above
		HTTPClient: c.http,
		HTTPHeader: http.Header{"User-Agent": []string{userAgent}},
	})
	if err == nil {
		c.stats.dials.Add(1)
		return ws, nil
	}
	if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone:
			// What a TrueNAS before 25.04 answers: no such route.
			return nil, &clientError{
				msg:   fmt.Sprintf("truenas %s: no WebSocket at /api/current (HTTP %d)", c.st.endpoint, resp.StatusCode),
				kinds: []error{errNoWebSocket},
			}
		case http.StatusBadRequest:
			// Not proof of an old server: plain http to an https port gets
			// this too, and falling back to REST would send credentials there.
			return nil, c.fail(ErrUnreachable, "the WebSocket handshake at /api/current was answered with HTTP 400 (plain http to an https port? check %s and %s)",
				keyProtocol, keyPort)
		default:
			return nil, c.fail(ErrUnreachable, "the WebSocket handshake at /api/current was answered with HTTP %d (is the middleware running?)", resp.StatusCode)
		}
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, c.fail(ErrUnreachable, "cannot connect to %s: %v", c.st.wsURL(), ctx.Err())
	}
	if p := tlsProblem(err); p != "" {
		return nil, c.fail(ErrTLS, "%s", p)
	}
	return nil, c.fail(ErrUnreachable, "cannot connect to %s: %v", c.st.wsURL(), unwrapDialError(err))
}

// adopt installs a handshaken connection (the transport probe's) as current.
func (t *wsTransport) adopt(ws *websocket.Conn) {
	conn := newWSConn(t.c, ws)
	t.mu.Lock()
	old := t.cur
	t.cur = conn
	t.made++
	t.mu.Unlock()
	if old != nil {
		old.kill(errors.New("replaced"))
	}
}

// conn returns a live connection, dialing if there is none. The dial runs
// on its own (bounded by Timeout and close) so a caller giving up does not
// fail the others waiting for it.
func (t *wsTransport) conn(ctx context.Context, method string) (*wsConn, error) {
	t.mu.Lock()
	if c := t.cur; c != nil && c.alive() {
		t.mu.Unlock()
		return c, nil
	}
	d := t.dialing
	if d == nil {
		d = &wsDial{done: make(chan struct{})}
		t.dialing = d
		go t.dial(t.life, d)
	}
	t.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, t.c.cancelled(method, "while connecting", false, ctx.Err())
	}
}

func (t *wsTransport) dial(life context.Context, d *wsDial) {
	ws, err := t.handshake(life)
	if errors.Is(err, errNoWebSocket) {
		// It was there when the transport was chosen: the server changed.
		err = t.c.fail(ErrUnsupported, "%v; the server no longer serves the WebSocket it did", err)
	}
	var conn *wsConn
	t.mu.Lock()
	if t.dialing == d {
		t.dialing = nil
		if err == nil {
			conn = newWSConn(t.c, ws)
			t.cur = conn
			t.made++
			if t.made > 1 {
				t.c.stats.reconnects.Add(1)
				t.c.log.Info("truenas websocket reconnected")
			}
		}
	} else {
		// close ran while we dialed: nobody may use this connection.
		if err == nil {
			_ = ws.CloseNow()
		}
		err = t.c.fail(ErrUnreachable, "client closed while connecting")
	}
	t.mu.Unlock()
	d.conn, d.err = conn, err
	close(d.done)
}

// ready returns a live, logged-in connection and its login generation.
// A conn that dies while being set up is replaced once.
func (t *wsTransport) ready(ctx context.Context, method string) (*wsConn, int64, error) {
	for attempt := 0; ; attempt++ {
		conn, err := t.conn(ctx, method)
		if err != nil {
			return nil, 0, err
		}
		gen, err := t.session(ctx, conn, method)
		if err == nil {
			return conn, gen, nil
		}
		if attempt == 0 && (errors.Is(err, errStale) || (errors.Is(err, ErrConnectionLost) && !conn.alive())) {
			continue
		}
		if errors.Is(err, errStale) {
			err = t.c.fail(ErrUnreachable, "%s: the connection keeps closing before calls can be sent", method)
		}
		return nil, 0, err
	}
}

func (t *wsTransport) call(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	if err := t.c.acquire(ctx, method); err != nil {
		return nil, err
	}
	defer t.c.release()
	res, _, err := t.callHeld(ctx, method, params)
	return res, err
}

// callHeld runs one call (a slot already held): connect and log in as
// needed, resend after a -32000, log in again once after ENOTAUTHENTICATED,
// and resend once on a fresh connection when the old one was found dead
// before the request went out. direct reports whether the conn answers
// job methods with their results.
func (t *wsTransport) callHeld(ctx context.Context, method string, params []any) (res json.RawMessage, direct bool, err error) {
	relogin, fresh := true, true
	backoff := busyBackoffMin
	for {
		conn, gen, err := t.ready(ctx, method)
		if err != nil {
			return nil, false, err
		}
		res, err := conn.roundTrip(ctx, method, params)
		switch {
		case err == nil:
			return res, conn.direct.Load(), nil
		case errors.Is(err, errStale) && fresh:
			fresh = false
		case isTooManyCalls(err):
			t.c.stats.busyRetries.Add(1)
			if err := sleepCtx(ctx, backoff); err != nil {
				return nil, false, t.c.cancelled(method, "waiting to resend after the server was busy", false, err)
			}
			backoff = min(2*backoff, busyBackoffMax)
		case isNotAuthenticated(err) && relogin:
			relogin = false
			conn.session.CompareAndSwap(gen, 0)
			t.c.log.Info("truenas session expired; logging in again", "method", method)
		default:
			if errors.Is(err, errStale) {
				err = t.c.fail(ErrUnreachable, "%s: the connection keeps closing before calls can be sent", method)
			}
			return nil, false, err
		}
	}
}

func (t *wsTransport) callJob(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	if err := t.c.acquire(ctx, method); err != nil {
		return nil, err
	}
	// Until we know the connection, bound the call by Timeout; a direct
	// (25.10+) job call blocks for the whole job and is bounded by ctx.
	res, direct, err := t.callJobStart(ctx, method, params)
	t.c.release()
	if err != nil || direct {
		return res, err
	}
	return t.c.waitForJob(ctx, t, method, res)
}

func (t *wsTransport) callJobStart(ctx context.Context, method string, params []any) (json.RawMessage, bool, error) {
	tctx, cancel := context.WithTimeout(ctx, t.c.st.cfg.Timeout)
	defer cancel()
	conn, _, err := t.ready(tctx, method)
	if err != nil {
		return nil, false, err
	}
	if conn.direct.Load() {
		return t.callHeld(ctx, method, params)
	}
	return t.callHeld(tctx, method, params)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
