package truenas

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/coder/websocket"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// legacyConn is one connection of the legacy DDP-style protocol served at
// /websocket: {"msg":"connect"} first, then "method" calls answered by
// "result" messages, "ping"/"pong" and "sub"/"unsub" for job events.
type legacyConn struct {
	srv       *Server
	ws        *websocket.Conn
	gen       *generation
	ss        *session
	ctx       context.Context
	handshake bool
}

// legacyMessage is any client message of the protocol.
type legacyMessage struct {
	Msg     string            `json:"msg"`
	ID      json.RawMessage   `json:"id"`
	Version string            `json:"version"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
	Name    string            `json:"name"`
}

func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request) {
	if !s.begin() {
		plainError(w, http.StatusServiceUnavailable)
		return
	}
	defer s.end()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	ws.SetReadLimit(maxMessage)
	s.stats.legacySessions.Add(1)
	c := &legacyConn{srv: s, ws: ws, gen: s.generation(), ctx: r.Context(),
		ss: newSession(s, transportLegacy, r.TLS != nil, r.RemoteAddr)}
	c.ss.event = c.sendEvent
	s.addSession(c.ss)
	defer s.removeSession(c.ss)
	defer ws.CloseNow()
	for {
		typ, data, err := ws.Read(c.gen.ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			ws.Close(websocket.StatusUnsupportedData, "Invalid websocket message type: BINARY")
			return
		}
		var m legacyMessage
		if err := json.Unmarshal(data, &m); err != nil {
			ws.Close(websocket.StatusInvalidFramePayloadData, err.Error())
			return
		}
		c.handle(m)
	}
}

func (c *legacyConn) handle(m legacyMessage) {
	if m.Msg == "connect" {
		if m.Version != "1" {
			c.send(map[string]any{"msg": "failed", "version": "1"})
			return
		}
		c.handshake = true
		c.send(map[string]any{"msg": "connected", "session": newIdent()})
		return
	}
	if !c.handshake {
		c.send(map[string]any{"msg": "failed", "version": "1"})
		return
	}
	switch m.Msg {
	case "method":
		c.method(m)
	case "ping":
		pong := map[string]any{"msg": "pong"}
		if m.ID != nil {
			pong["id"] = m.ID
		}
		c.send(pong)
	case "sub", "unsub":
		if user, _ := c.ss.identity(); user == "" {
			c.sendError(m.ID, middleware.EACCES, "Not authenticated", "", nil, nil)
			return
		}
		var ident string
		_ = json.Unmarshal(m.ID, &ident)
		if m.Msg == "unsub" {
			c.ss.unsubscribe(ident)
			return
		}
		c.ss.subscribe(ident, m.Name)
		c.send(map[string]any{"msg": "ready", "subs": []json.RawMessage{m.ID}})
	}
}

// method runs a call concurrently with the others of the connection.
func (c *legacyConn) method(m legacyMessage) {
	if !c.srv.begin() {
		return
	}
	go func() {
		defer c.srv.end()
		out := c.srv.call(c.gen, c.ss, m.Method, m.Params)
		if out.drop {
			dropConn(c.ctx)
			return
		}
		if out.err != nil {
			c.sendCallError(m.ID, out.err)
			return
		}
		result, err := middleware.Encode(out.result)
		if err != nil {
			c.sendError(m.ID, middleware.EINVAL, "the result cannot be encoded: "+err.Error(), "", nil, nil)
			return
		}
		c.send(map[string]any{"msg": "result", "id": m.ID, "result": json.RawMessage(result)})
	}()
}

// sendCallError renders an error as the legacy protocol does: validation
// errors carry type "VALIDATION" and extra [[attribute, message, errno]].
func (c *legacyConn) sendCallError(id json.RawMessage, err error) {
	cl := classify(err)
	switch cl.kind {
	case kindValidation:
		reason := validationReason(cl.invalid)
		c.sendError(id, errnoEAGAIN, reason, "VALIDATION", validationExtra(cl.invalid), traceOf("ValidationErrors", reason, ""))
	case kindNotFound:
		reason := notFoundReason(cl.notFound)
		c.sendError(id, middleware.ENOENT, reason, "VALIDATION", []any{[]any{nil, cl.notFound.Message, middleware.ENOENT}}, traceOf("InstanceNotFound", reason, ""))
	case kindCall, kindNoMethod:
		reason := callReason(cl.call)
		c.sendError(id, cl.call.Errno, reason, "", cl.call.Extra, traceOf("CallError", reason, ""))
	default:
		c.sendError(id, middleware.EINVAL, err.Error(), "", nil, internalTrace(err))
	}
}

func (c *legacyConn) sendError(id json.RawMessage, errno int, reason, typ string, extra any, trace map[string]any) {
	var t any
	if typ != "" {
		t = typ
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	c.send(map[string]any{"msg": "result", "id": id, "error": map[string]any{
		"error": errno, "errname": errname(errno), "type": t, "reason": reason, "trace": trace, "extra": extra}})
}

func (c *legacyConn) sendEvent(msg, collection string, id int, fields map[string]any) {
	c.send(map[string]any{"msg": msg, "collection": collection, "id": id, "fields": fields})
}

func (c *legacyConn) send(v any) {
	data, err := middleware.Encode(v)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.gen.ctx, writeTimeout)
	defer cancel()
	c.ws.Write(ctx, websocket.MessageText, data)
}
