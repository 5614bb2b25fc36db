package api

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/coder/websocket"
)

// wsLane is one of the client's WebSocket connections: made on first use,
// logged in, replaced when it dies. Each lane dials, logs in and
// reconnects on its own; a lane's death fails only the calls on it.
type wsLane struct {
	t     *wsTransport
	index int

	mu      sync.Mutex
	cur     *wsConn
	dialing *wsDial // the dial in progress, shared by every call waiting for it
	made    int     // connections made so far (to count reconnects)
	// life is cancelled by close, abandoning a dial in progress.
	life       context.Context
	cancelLife context.CancelFunc
}

type wsDial struct {
	done chan struct{}
	conn *wsConn
	err  error
}

func newWSLane(t *wsTransport, index int) *wsLane {
	l := &wsLane{t: t, index: index}
	l.life, l.cancelLife = context.WithCancel(context.Background())
	return l
}

func (l *wsLane) close() {
	l.mu.Lock()
	l.cancelLife()
	l.life, l.cancelLife = context.WithCancel(context.Background())
	l.dialing = nil
	cur := l.cur
	l.cur = nil
	l.mu.Unlock()
	if cur != nil {
		cur.kill(errors.New("client closed"))
	}
}

// adopt installs a handshaken connection as current.
func (l *wsLane) adopt(ws *websocket.Conn) {
	conn := newWSConn(l.t.c, ws)
	l.mu.Lock()
	old := l.cur
	l.cur = conn
	l.made++
	l.mu.Unlock()
	if old != nil {
		old.kill(errors.New("replaced"))
	}
}

// conn returns a live connection, dialing if there is none. The dial runs
// on its own (bounded by Timeout and close) so a caller giving up does not
// fail the others waiting for it.
func (l *wsLane) conn(ctx context.Context, method string) (*wsConn, error) {
	l.mu.Lock()
	if c := l.cur; c != nil && c.alive() {
		l.mu.Unlock()
		return c, nil
	}
	d := l.dialing
	if d == nil {
		d = &wsDial{done: make(chan struct{})}
		l.dialing = d
		go l.dial(l.life, d)
	}
	l.mu.Unlock()
	select {
	case <-d.done:
		return d.conn, d.err
	case <-ctx.Done():
		return nil, l.t.c.cancelled(method, "while connecting", false, ctx.Err())
	}
}

func (l *wsLane) dial(life context.Context, d *wsDial) {
	c := l.t.c
	ws, err := l.t.handshake(life)
	if errors.Is(err, errNoWebSocket) {
		// It was there when the transport was chosen: the server changed.
		err = c.fail(ErrUnsupported, "%v; the server no longer serves the WebSocket it did", err)
	}
	var conn *wsConn
	l.mu.Lock()
	if l.dialing == d {
		l.dialing = nil
		if err == nil {
			conn = newWSConn(c, ws)
			l.cur = conn
			l.made++
			if l.made > 1 {
				c.stats.reconnects.Add(1)
				c.log.Info("truenas websocket reconnected", "lane", l.index)
			}
		}
	} else {
		// close ran while we dialed: nobody may use this connection.
		if err == nil {
			_ = ws.CloseNow()
		}
		err = c.fail(ErrUnreachable, "client closed while connecting")
	}
	l.mu.Unlock()
	d.conn, d.err = conn, err
	close(d.done)
}

// ready returns a live, logged-in connection and its login generation.
// A conn that dies while being set up is replaced once.
func (l *wsLane) ready(ctx context.Context, method string) (*wsConn, int64, error) {
	for attempt := 0; ; attempt++ {
		conn, err := l.conn(ctx, method)
		if err != nil {
			return nil, 0, err
		}
		gen, err := l.t.session(ctx, conn, method)
		if err == nil {
			return conn, gen, nil
		}
		if attempt == 0 && (errors.Is(err, errStale) || (errors.Is(err, ErrConnectionLost) && !conn.alive())) {
			continue
		}
		if errors.Is(err, errStale) {
			err = l.t.c.fail(ErrUnreachable, "%s: the connection keeps closing before calls can be sent", method)
		}
		return nil, 0, err
	}
}

// callHeld runs one call (a slot and a place on the lane already held):
// connect and log in as needed, resend after a -32000, log in again once
// after ENOTAUTHENTICATED, and resend once on a fresh connection when the
// old one was found dead before the request went out. direct reports
// whether the conn answers job methods with their results.
func (l *wsLane) callHeld(ctx context.Context, method string, params []any) (res json.RawMessage, direct bool, err error) {
	c := l.t.c
	relogin, fresh := true, true
	backoff := busyBackoffMin
	for {
		conn, gen, err := l.ready(ctx, method)
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
			c.stats.busyRetries.Add(1)
			if err := sleepCtx(ctx, backoff); err != nil {
				return nil, false, c.cancelled(method, "waiting to resend after the server was busy", false, err)
			}
			backoff = min(2*backoff, busyBackoffMax)
		case isNotAuthenticated(err) && relogin:
			relogin = false
			conn.session.CompareAndSwap(gen, 0)
			c.log.Info("truenas session expired; logging in again", "method", method)
		default:
			if errors.Is(err, errStale) {
				err = c.fail(ErrUnreachable, "%s: the connection keeps closing before calls can be sent", method)
			}
			return nil, false, err
		}
	}
}

func (l *wsLane) callJobStart(ctx context.Context, method string, params []any) (json.RawMessage, bool, error) {
	tctx, cancel := context.WithTimeout(ctx, l.t.c.st.cfg.Timeout)
	defer cancel()
	conn, _, err := l.ready(tctx, method)
	if err != nil {
		return nil, false, err
	}
	if conn.direct.Load() {
		return l.callHeld(ctx, method, params)
	}
	return l.callHeld(tctx, method, params)
}
