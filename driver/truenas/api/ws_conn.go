package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// wsReadLimit bounds one answer: a pool.dataset.query on a big system runs
// to megabytes, but a runaway message must not take the driver's memory.
const wsReadLimit = 256 << 20

// pingTimeout bounds the liveness check after a call timed out.
const pingTimeout = 10 * time.Second

// errStale: the connection was found dead before the request was written,
// so the call did not run and may go out again on a new connection.
var errStale = errors.New("connection closed before the request was sent")

// wsConn is one WebSocket connection. Requests carry increasing ids; one
// reader goroutine routes each answer to the call waiting for it, so any
// number of calls share the socket and answers may come in any order.
// A conn is never revived: once dead it is replaced by a new dial.
type wsConn struct {
	c      *Client
	ws     *websocket.Conn
	life   context.Context // ends when the conn dies
	cancel context.CancelFunc
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan wireReply
	dead    chan struct{}
	deadErr error
	once    sync.Once

	// setup serialises login on this conn (one login for many waiting calls).
	setup chan struct{}
	// session is the login generation in force, 0 when not logged in: a
	// call that hit ENOTAUTHENTICATED under generation g logs out g only,
	// so many such calls cause one new login.
	session atomic.Int64
	logins  atomic.Int64
	// configured: system.version and core.set_options have been done.
	configured bool
	// direct: legacy_jobs is off, so job methods answer with their result.
	direct  atomic.Bool
	probing atomic.Bool
}

func newWSConn(c *Client, ws *websocket.Conn) *wsConn {
	ws.SetReadLimit(wsReadLimit)
	life, cancel := context.WithCancel(context.Background())
	conn := &wsConn{
		c:       c,
		ws:      ws,
		life:    life,
		cancel:  cancel,
		pending: make(map[int64]chan wireReply),
		dead:    make(chan struct{}),
		setup:   make(chan struct{}, 1),
	}
	go conn.readLoop()
	return conn
}

// Wire messages (JSON-RPC 2.0).
type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
	Method string          `json:"method"` // notifications (collection_update, ...): ignored
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    *struct {
		Error   int             `json:"error"`
		Errname string          `json:"errname"`
		Reason  string          `json:"reason"`
		Extra   json.RawMessage `json:"extra"`
	} `json:"data"`
}

type wireReply struct {
	result json.RawMessage
	err    *wireError
}

func (c *wsConn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// kill marks the conn dead, closes the socket and fails every waiting
// call. Returns true for the call that did it.
func (c *wsConn) kill(why error) bool {
	first := false
	c.once.Do(func() {
		first = true
		c.mu.Lock()
		c.deadErr = why
		c.mu.Unlock()
		close(c.dead)
		c.cancel()
		_ = c.ws.CloseNow()
	})
	return first
}

func (c *wsConn) readLoop() {
	for {
		typ, data, err := c.ws.Read(c.life)
		if err != nil {
			if c.kill(err) {
				c.c.log.Info("truenas websocket closed; reconnecting on next call", "reason", c.c.red.redact(err.Error()))
			}
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		m, err := decodeWire(data)
		if err != nil {
			c.c.log.Warn("truenas sent a message that is not JSON; ignored", "error", err.Error())
			continue
		}
		id, ok := parseWireID(m.ID)
		if !ok {
			if m.Error != nil {
				// An error without an id answers nothing we can route (the
				// server could not read a request): log it.
				c.c.log.Warn("truenas reported an error for no call", "code", m.Error.Code, "message", c.c.red.redact(m.Error.Message))
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- wireReply{result: m.Result, err: m.Error}
		}
	}
}

// parseWireID reads the id we sent (an integer; some servers echo it as a string).
func parseWireID(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		raw = []byte(s)
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	return id, err == nil
}

// roundTrip sends one request and waits for its answer, ctx's end or the
// conn's death. A server failure is an *Error.
func (c *wsConn) roundTrip(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	if !c.alive() {
		return nil, errStale
	}
	roundtrip.Count(ctx, roundtrip.WebSocket)
	if params == nil {
		params = []any{}
	}
	id := c.nextID.Add(1)
	body, err := json.Marshal(wireRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, c.c.fail(nil, "%s: cannot encode the parameters: %v", method, err)
	}
	reply := make(chan wireReply, 1)
	c.mu.Lock()
	c.pending[id] = reply
	c.mu.Unlock()

	// The write runs under the conn's own deadline, not ctx: the library
	// closes the whole socket when a write's context ends, which would
	// fail every other call on it because this caller gave up.
	wctx, cancel := context.WithTimeout(c.life, c.c.st.cfg.Timeout)
	err = c.ws.Write(wctx, websocket.MessageText, body)
	cancel()
	if err != nil {
		c.forget(id)
		c.kill(err)
		return nil, c.c.fail(ErrConnectionLost, "%s: connection lost while sending the request (the call may have taken effect): %v", method, err)
	}

	select {
	case r := <-reply:
		return c.answer(method, r)
	case <-ctx.Done():
		c.forget(id)
		if ctx.Err() == context.DeadlineExceeded {
			c.checkAlive()
		}
		return nil, c.c.cancelled(method, "waiting for the answer", true, ctx.Err())
	case <-c.dead:
		select {
		case r := <-reply: // answered just before the drop
			return c.answer(method, r)
		default:
		}
		c.forget(id)
		return nil, c.c.fail(ErrConnectionLost, "%s: connection lost while waiting for the answer (the call may have taken effect): %v",
			method, c.deathCause())
	}
}

// checkAlive pings the server after a call timed out: a peer that vanished
// without closing TCP (power loss) is otherwise noticed only when the
// kernel gives up, minutes later, and every call until then would time out.
func (c *wsConn) checkAlive() {
	if !c.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.probing.Store(false)
		ctx, cancel := context.WithTimeout(c.life, min(c.c.st.cfg.Timeout, pingTimeout))
		defer cancel()
		if err := c.ws.Ping(ctx); err != nil && c.kill(err) {
			c.c.log.Warn("truenas websocket unanswered; reconnecting on next call", "error", err.Error())
		}
	}()
}

func (c *wsConn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *wsConn) deathCause() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deadErr == nil {
		return "closed"
	}
	return c.deadErr.Error()
}

func (c *wsConn) answer(method string, r wireReply) (json.RawMessage, error) {
	if r.err != nil {
		return nil, c.c.serverError(rpcError(method, r.err))
	}
	if len(r.result) == 0 {
		return json.RawMessage("null"), nil
	}
	return r.result, nil
}

// rpcError turns a JSON-RPC error into an *Error: -32602 carries
// validation errors as data.extra = [[attribute, message, errno], ...],
// -32001 a CallError as data.error/errname/reason.
func rpcError(method string, w *wireError) *Error {
	e := &Error{Method: method, Code: w.Code, Message: w.Message}
	if d := w.Data; d != nil {
		e.Errno = d.Error
		name, reason := splitErrnamePrefix(d.Reason)
		e.Errname = d.Errname
		if e.Errname == "" {
			e.Errname = name
		}
		if reason != "" && w.Code != codeInvalidParams {
			e.Message = reason
		}
		if w.Code == codeInvalidParams {
			e.Fields = parseExtraFields(d.Extra)
			if len(e.Fields) == 0 && reason != "" {
				e.Message = reason
			}
		}
	}
	if e.Errname == "EUNKNOWN" {
		e.Errname = ""
	}
	return e
}

// parseExtraFields reads [[attribute, message, errno], ...]; anything else
// yields nothing.
func parseExtraFields(raw json.RawMessage) []FieldError {
	var rows [][]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &rows) != nil {
		return nil
	}
	var out []FieldError
	for _, row := range rows {
		if len(row) < 2 {
			continue
		}
		var f FieldError
		_ = json.Unmarshal(row[0], &f.Attribute) // null for a whole-call error
		if json.Unmarshal(row[1], &f.Message) != nil {
			continue
		}
		if len(row) > 2 {
			_ = json.Unmarshal(row[2], &f.Errno)
		}
		out = append(out, f)
	}
	return out
}
