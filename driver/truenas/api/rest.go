package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

const (
	userAgent = "switchyard-csi"
	// restBodyLimit bounds one REST answer, like wsReadLimit.
	restBodyLimit = 256 << 20
)

// restTransport sends each call as one HTTP request to /api/v2.0 with the
// credentials in its Authorization header, over the Client's keep-alive pool.
type restTransport struct{ c *Client }

func (r *restTransport) name() string { return TransportREST }
func (r *restTransport) close()       {}

func (r *restTransport) call(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	req, err := mapREST(method, params)
	if err != nil {
		return nil, r.c.fail(ErrUnsupported, "%v", err)
	}
	// 24.10's iscsi.target.delete takes (id, force) only, and its REST
	// layer reads the body of a one-parameter method as that parameter:
	// force goes bare there, not keyed as 25.04+ (id, force, delete_extents)
	// wants it.
	if v, known := r.c.cachedVersion(); method == "iscsi.target.delete" && len(params) == 2 && known && !v.AtLeast(25, 4, 0) {
		req.Body = params[1]
	}
	if err := r.c.acquire(ctx, method); err != nil {
		return nil, err
	}
	defer r.c.release()
	if err := r.c.authGt.held(); err != nil {
		return nil, err
	}
	return r.do(ctx, method, req)
}

// callJob: the job method answers its job id; poll GET /core/get_jobs?id=N.
func (r *restTransport) callJob(ctx context.Context, method string, params []any) (json.RawMessage, error) {
	tctx, cancel := context.WithTimeout(ctx, r.c.st.cfg.Timeout)
	res, err := r.call(tctx, method, params)
	cancel()
	if err != nil {
		return nil, err
	}
	return r.c.waitForJob(ctx, r, method, res)
}

// probe checks that /api/v2.0 is served and the credentials work, and
// learns the version on the way. found is false when the server answers
// 404 there (TrueNAS 26 removed REST).
func (r *restTransport) probe(ctx context.Context) (found bool, err error) {
	res, err := r.do(ctx, "system.version", restRequest{Verb: "GET", Path: "/system/version"})
	var e *Error
	if errors.As(err, &e) && e.noRoute {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if _, err := r.c.storeVersion(res); err != nil {
		r.c.log.Warn("truenas system.version unreadable", "error", err.Error())
	}
	return true, nil
}

func (r *restTransport) do(ctx context.Context, method string, rr restRequest) (json.RawMessage, error) {
	c := r.c
	target := c.st.restURL() + rr.Path
	if len(rr.Query) > 0 {
		target += "?" + rr.Query.Encode()
	}
	var body io.Reader
	if rr.HasBody {
		b, err := json.Marshal(rr.Body)
		if err != nil {
			return nil, c.fail(nil, "%s: cannot encode the parameters: %v", method, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, rr.Verb, target, body)
	if err != nil {
		return nil, c.fail(nil, "%s: cannot build the request: %v", method, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if rr.HasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.st.useAPIKey {
		req.Header.Set("Authorization", "Bearer "+c.st.cfg.APIKey)
	} else {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.st.cfg.Username+":"+c.st.cfg.Password)))
	}

	c.stats.httpRequests.Add(1)
	roundtrip.Count(ctx, roundtrip.HTTP)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, r.transportError(ctx, method, rr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, restBodyLimit))
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.cancelled(method, "reading the answer", true, ctx.Err())
		}
		return nil, c.fail(ErrConnectionLost, "%s: connection lost while reading the answer (the call may have taken effect): %v", method, err)
	}
	if resp.StatusCode == http.StatusOK {
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			return json.RawMessage("null"), nil
		}
		if !json.Valid(data) {
			return nil, c.fail(nil, "%s: %s %s answered 200 with a body that is not JSON", method, rr.Verb, "/api/v2.0"+rr.Path)
		}
		return json.RawMessage(data), nil
	}
	return nil, r.statusError(method, rr, resp.StatusCode, data)
}

// transportError sorts a failed HTTP exchange: the caller's context, TLS,
// a connection never made (the call did not run), or one lost after the
// request left (it may have).
func (r *restTransport) transportError(ctx context.Context, method string, rr restRequest, err error) error {
	c := r.c
	switch {
	case ctx.Err() != nil:
		return c.cancelled(method, "waiting for the answer", !dialFailed(err), ctx.Err())
	case tlsProblem(err) != "":
		return c.fail(ErrTLS, "%s", tlsProblem(err))
	case dialFailed(err):
		return c.fail(ErrUnreachable, "cannot connect to %s: %v", c.st.endpoint, unwrapDialError(err))
	case strings.Contains(err.Error(), "redirected to"):
		return c.fail(ErrUnsupported, "%s: %s %s was %v", method, rr.Verb, "/api/v2.0"+rr.Path, unwrapDialError(err))
	default:
		return c.fail(ErrConnectionLost, "%s: connection lost (the call may have taken effect): %v", method, unwrapDialError(err))
	}
}

// statusError reads a non-200 answer the way the restful layer writes them:
// 401 bad credentials; 404 {"message"} for a missing object (a bare 404 is
// a missing route); 422 {"message","errno"} for a CallError or
// {"<attribute>": [{"message","errno"}]} for validation errors;
// 400/500 {"message"}.
func (r *restTransport) statusError(method string, rr restRequest, status int, body []byte) error {
	c := r.c
	msg, obj := restMessage(body)
	switch {
	case status == http.StatusUnauthorized:
		who := "the API key"
		fix := "check " + keyAPIKey + " (TrueNAS 25.04.2 and later revoke a key that was once sent without TLS)"
		if !c.st.useAPIKey {
			who = "login as \"" + c.st.cfg.Username + "\""
			fix = "check " + keyUsername + " and " + keyPassword
		}
		if msg == "" {
			msg = "HTTP 401"
		}
		err := c.fail(ErrAuth, "%s was refused (%s): %s", who, msg, fix)
		c.authGt.refused(err)
		c.log.Warn("truenas login refused", "error", err.Error())
		return err
	case (status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout) && obj == nil:
		return c.fail(ErrUnreachable, "%s: the web server answered HTTP %d (the middleware is not answering)", method, status)
	}
	e := &Error{Method: method, HTTPStatus: status, Message: msg}
	switch {
	case status == http.StatusNotFound && obj == nil:
		e.noRoute = true
		e.Message = "no such REST endpoint " + rr.Verb + " /api/v2.0" + rr.Path + " (the method does not exist on this TrueNAS version)"
	case status == http.StatusNotFound && msg == "":
		// The middleware's MatchNotFound carries no text.
		e.Message = "the object does not exist"
	case status == http.StatusForbidden && msg == "":
		e.Message = "the credentials are not allowed to make this call"
	case status == 422 && obj != nil && msg == "":
		e.Fields = restFields(obj)
	}
	if obj != nil {
		if n, ok := obj["errno"]; ok {
			_ = json.Unmarshal(n, &e.Errno)
			e.Errname = errnoNames[e.Errno]
		}
	}
	if e.Message == "" && len(e.Fields) == 0 {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 300 {
			e.Message = e.Message[:300] + "..."
		}
	}
	return c.serverError(e)
}

// restMessage returns the body's "message" (or the text of a plain-text
// body) and the body as a JSON object when it is one.
func restMessage(body []byte) (string, map[string]json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		var s string
		if json.Unmarshal(body, &s) == nil {
			return s, nil
		}
		text := strings.TrimSpace(string(body))
		if len(text) > 300 || strings.HasPrefix(text, "<") {
			text = ""
		}
		return text, nil
	}
	var msg string
	if raw, ok := obj["message"]; ok {
		_ = json.Unmarshal(raw, &msg)
	}
	return msg, obj
}

// restFields reads {"attr": [{"message", "errno"}, ...], ...}, sorted by attribute.
func restFields(obj map[string]json.RawMessage) []FieldError {
	var out []FieldError
	for attr, raw := range obj {
		var items []struct {
			Message string `json:"message"`
			Errno   int    `json:"errno"`
		}
		if json.Unmarshal(raw, &items) != nil {
			continue
		}
		if attr == "null" { // an error about the whole call: Python's None as a JSON key
			attr = ""
		}
		for _, it := range items {
			out = append(out, FieldError{Attribute: attr, Message: it.Message, Errno: it.Errno})
		}
	}
	sortFields(out)
	return out
}
