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

// wsCallsPerConn is how many calls the driver keeps in flight on one
// WebSocket. middlewared runs at most 10 calls at once per connection and
// refuses more than 20 (SoftHardSemaphore(10, 20) in
// api/base/server/ws_handler/rpc.py): an 11th call on a connection only
// waits inside the middleware, so calls beyond 10 go over another
// connection, a lane, instead.
const wsCallsPerConn = 10

// wsTransport spreads a Client's calls over its WebSocket lanes: a call
// uses the lowest lane with fewer than wsCallsPerConn calls in flight, so
// a client that never has more than that in flight keeps one connection.
// There are ceil(MaxConcurrentCalls / wsCallsPerConn) lanes, so a call
// holding one of the client's slots always finds room.
type wsTransport struct {
	c     *Client
	lanes []*wsLane

	mu       sync.Mutex
	inFlight []int // calls using each lane

	// logins lets one lane log in at a time: a refused login is then seen
	// by the auth gate before another lane tries the same credentials.
	logins chan struct{}

	loginExMissing atomic.Bool // the server has no auth.login_ex: use the legacy logins
}

func newWSTransport(c *Client) *wsTransport {
	n := (c.st.cfg.MaxConcurrentCalls + wsCallsPerConn - 1) / wsCallsPerConn
	t := &wsTransport{c: c, lanes: make([]*wsLane, n), inFlight: make([]int, n), logins: make(chan struct{}, 1)}
	for i := range t.lanes {
		t.lanes[i] = newWSLane(t, i)
	}
	return t
}

func (t *wsTransport) name() string { return TransportWebSocket }

// close drops every lane's connection, failing the calls waiting on them.
func (t *wsTransport) close() {
	for _, l := range t.lanes {
		l.close()
	}
}

// reserve picks the lane for one call and counts the call on it until
// unreserve. The caller holds a client slot, so a lane has room; the
// least busy lane is the fallback all the same.
func (t *wsTransport) reserve() *wsLane {
	t.mu.Lock()
	defer t.mu.Unlock()
	best := 0
	for i, n := range t.inFlight {
		if n < wsCallsPerConn {
			best = i
			break
		}
		if n < t.inFlight[best] {
			best = i
		}
	}
	t.inFlight[best]++
	return t.lanes[best]
}

func (t *wsTransport) unreserve(l *wsLane) {
	t.mu.Lock()
	t.inFlight[l.index]--
	t.mu.Unlock()
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

// adopt installs a handshaken connection (the transport probe's) as the
// first lane's.
func (t *wsTransport) adopt(ws *websocket.Conn) { t.lanes[0].adopt(ws) }

func (t *wsTransport) call(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	if err := t.c.acquire(ctx, method); err != nil {
		return nil, err
	}
	defer t.c.release()
	l := t.reserve()
	defer t.unreserve(l)
	res, _, err := l.callHeld(ctx, method, params)
	return res, err
}

// callJob runs a job method on one lane. A legacy job is then waited for
// with core.get_jobs polls, each on whichever lane has room: the
// middleware lists a job to every session of the user who started it.
func (t *wsTransport) callJob(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	if err := t.c.acquire(ctx, method); err != nil {
		return nil, err
	}
	// Until we know the connection, bound the call by Timeout; a direct
	// (25.10+) job call blocks for the whole job and is bounded by ctx,
	// holding its slot and its place on the lane meanwhile.
	l := t.reserve()
	res, direct, err := l.callJobStart(ctx, method, params)
	t.unreserve(l)
	t.c.release()
	if err != nil || direct {
		return res, err
	}
	return t.c.waitForJob(ctx, t, method, res)
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
