package truenas

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// JSON-RPC error codes (JSON-RPC 2.0 and middlewared's own).
const (
	rpcParseError      = -32700
	rpcInvalidRequest  = -32600
	rpcMethodNotFound  = -32601
	rpcInvalidParams   = -32602
	rpcInternalError   = -32603
	rpcTooManyCalls    = -32000
	rpcMethodCallError = -32001
)

// maxMessage bounds one WebSocket message.
const maxMessage = 16 << 20

// writeTimeout bounds sending one answer to a client that stopped reading.
const writeTimeout = 30 * time.Second

// rpcConn is one JSON-RPC 2.0 WebSocket connection.
type rpcConn struct {
	srv      *Server
	ws       *websocket.Conn
	gen      *generation
	ss       *session
	ctx      context.Context // the request's: holds the TCP connection for drops
	inflight atomic.Int64
	slots    chan struct{} // middlewared's soft limit: calls running at once
}

// serveJSONRPC upgrades /api/current and /api/v<version> (25.04+).
func (s *Server) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/api/")
	if !s.version.AtLeast(25, 4, 0) || name != "current" && !contains(s.apiVersions(), name) {
		plainError(w, http.StatusNotFound)
		return
	}
	if !s.begin() {
		plainError(w, http.StatusServiceUnavailable)
		return
	}
	defer s.end()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the request
	}
	ws.SetReadLimit(maxMessage)
	s.stats.wsSessions.Add(1)
	c := &rpcConn{srv: s, ws: ws, gen: s.generation(), ctx: r.Context(),
		ss: newSession(s, transportWebSocket, r.TLS != nil, r.RemoteAddr), slots: make(chan struct{}, max(1, s.opts.MaxConcurrentCalls/2))}
	c.ss.event = c.sendEvent
	s.addSession(c.ss)
	defer s.removeSession(c.ss)
	c.readLoop()
}

func (c *rpcConn) readLoop() {
	defer c.ws.CloseNow()
	for {
		typ, data, err := c.ws.Read(c.gen.ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.ws.Close(websocket.StatusUnsupportedData, "Invalid websocket message type: BINARY")
			return
		}
		c.handle(data)
	}
}

// rpcRequest is a validated request.
type rpcRequest struct {
	id     json.RawMessage // nil for a notification
	method string
	params []json.RawMessage
}

// handle validates one message and starts its call.
func (c *rpcConn) handle(data []byte) {
	req, code, msg := parseRPCRequest(data)
	if code != 0 {
		c.sendError(nil, code, msg, nil)
		return
	}
	if _, ok := c.srv.reg.Lookup(req.method); !ok {
		c.sendError(req.id, rpcMethodNotFound, "Method does not exist", nil)
		return
	}
	limit := int64(c.srv.opts.MaxConcurrentCalls)
	if c.inflight.Add(1) > limit {
		c.inflight.Add(-1)
		c.srv.stats.rejected.Add(1)
		c.sendError(req.id, rpcTooManyCalls, "Maximum number of concurrent calls ("+itoa(int(limit))+") has exceeded", nil)
		return
	}
	if !c.srv.begin() {
		c.inflight.Add(-1)
		return
	}
	c.srv.workers.run(func() {
		defer c.srv.end()
		out, ok := c.run(req)
		if !ok {
			return
		}
		if out.drop {
			dropConn(c.ctx)
			return
		}
		if req.id == nil {
			return // a notification gets no answer
		}
		if out.err != nil {
			code, msg, data := rpcError(out.err)
			c.sendError(req.id, code, msg, data)
			return
		}
		c.sendResult(req.id, out.result)
	})
}

// run makes the call within the connection's limits. The call leaves the
// in-flight count before its answer is sent, as in middlewared, so a client
// that waits for an answer before sending more never exceeds the limit.
func (c *rpcConn) run(req rpcRequest) (outcome, bool) {
	defer c.inflight.Add(-1)
	select {
	case c.slots <- struct{}{}:
	case <-c.gen.ctx.Done():
		return outcome{}, false
	}
	defer func() { <-c.slots }()
	return c.srv.call(c.gen, c.ss, req.method, req.params), true
}

func (c *rpcConn) send(v any) {
	data, err := middleware.Encode(v)
	if err != nil {
		return
	}
	c.write(data)
}

// write sends one encoded message.
func (c *rpcConn) write(data []byte) {
	ctx, cancel := context.WithTimeout(c.gen.ctx, writeTimeout)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageText, data)
}

// sendResult sends a result answer, resultMessage(id, Encode(result)),
// encoding the result in place in a pooled buffer (answerBuffers); a
// result that cannot be encoded is answered with an error.
func (c *rpcConn) sendResult(id json.RawMessage, result any) {
	buf := getAnswerBuffer()
	defer putAnswerBuffer(buf)
	data, err := appendResultHead(*buf, id)
	if err != nil {
		return
	}
	if data, err = middleware.AppendEncoded(data, result); err != nil {
		c.sendError(id, rpcInternalError, "Internal error", map[string]any{"error": 22, "errname": "EINVAL",
			"reason": "the result cannot be encoded: " + err.Error(), "trace": nil, "extra": nil})
		return
	}
	data = append(data, '}')
	c.write(data)
	*buf = data
}

// resultMessage is the bytes json.Marshal makes of {"jsonrpc": "2.0",
// "id": id, "result": result} (keys sorted, the id compacted and
// HTML-escaped as Marshal does), without Marshal scanning and copying the
// encoded result again: a few percent of the simulator's CPU per call
// (issue 16). result is json.Marshal's output (or middleware.Encode's,
// the same bytes), compact and escaped.
func resultMessage(id json.RawMessage, result []byte) ([]byte, error) {
	data, err := appendResultHead(make([]byte, 0, len(id)+len(result)+40), id)
	if err != nil {
		return nil, err
	}
	data = append(data, result...)
	return append(data, '}'), nil
}

// appendResultHead appends what resultMessage writes before the result.
func appendResultHead(dst []byte, id json.RawMessage) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	if plainBytes(id) && json.Valid(id) {
		// as Marshal would copy it (joinPlain): a Marshal per answer
		// (issue 16, eighth round)
		dst = append(dst, id...)
	} else {
		idb, err := json.Marshal(id)
		if err != nil {
			return nil, err
		}
		dst = append(dst, idb...)
	}
	return append(dst, `,"jsonrpc":"2.0","result":`...), nil
}

// sendError sends an error answer; id nil is JSON null.
func (c *rpcConn) sendError(id json.RawMessage, code int, msg string, data any) {
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

// sendEvent sends a collection_update notification for a subscription.
func (c *rpcConn) sendEvent(msg, collection string, id int, fields map[string]any) {
	c.send(map[string]any{"jsonrpc": "2.0", "method": "collection_update",
		"params": map[string]any{"msg": msg, "collection": collection, "id": id, "fields": fields}})
}
