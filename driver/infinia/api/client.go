package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// maxBody bounds what is read of one answer (a long volume list fits).
const maxBody = 64 << 20

// Client talks to one Infinia service account. It is safe for concurrent
// use; Close releases its idle connections.
type Client struct {
	st   *settings
	http *http.Client
	log  *slog.Logger
	red  redactor
	auth authState

	current                     atomic.Int32 // endpoint tried first
	logins, requests, failovers atomic.Int64
}

// Stats counts what a Client has sent.
type Stats struct {
	Logins    int64 // login requests (auth_user)
	Requests  int64 // every HTTP request, logins included
	Failovers int64 // times a call was answered by another endpoint than the one tried first
}

// New builds a client. Nothing is contacted until the first call.
func New(cfg Config, log *slog.Logger) (*Client, error) {
	st, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	c := &Client{st: st, log: orDiscard(log), red: newRedactor(st)}
	c.auth.hold = authFailureHold
	c.http = &http.Client{
		Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{
				Timeout:   min(st.cfg.Timeout, 10*time.Second),
				KeepAlive: 30 * time.Second,
			}).DialContext,
			TLSClientConfig: &tls.Config{
				RootCAs:            st.roots,                  // nil: the system roots
				InsecureSkipVerify: st.cfg.InsecureSkipVerify, //nolint:gosec // G402: an explicit, logged opt-out in the config (contract 7)
				MinVersion:         tls.VersionTLS12,
			},
			TLSHandshakeTimeout: min(st.cfg.Timeout, 10*time.Second),
			MaxConnsPerHost:     st.cfg.MaxConnsPerHost,
			MaxIdleConnsPerHost: st.cfg.MaxConnsPerHost,
			MaxIdleConns:        st.cfg.MaxConnsPerHost * len(st.endpoints),
			IdleConnTimeout:     90 * time.Second,
		},
		// A redirect would resend the login's password header to wherever
		// it points (Go only strips Authorization and cookies): refuse it.
		// The target is redacted with the rest of the error (it may be a
		// secret endpoint's host).
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("redirected to %s://%s; list that endpoint in apis instead", req.URL.Scheme, req.URL.Host)
		},
	}
	return c, nil
}

// Close drops idle connections. Calls still in flight finish normally.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Endpoint is the endpoint calls go to first (the last one that answered).
func (c *Client) Endpoint() string { return c.st.endpoints[c.current.Load()] }

// Endpoints are every configured endpoint, in failover order.
func (c *Client) Endpoints() []string { return append([]string(nil), c.st.endpoints...) }

// label is how errors and logs name endpoint idx: its URL, or "secret apis
// entry N" when the endpoints came from a secret.
func (c *Client) label(idx int) string { return c.st.labels[idx] }

// currentLabel names the endpoint calls go to first.
func (c *Client) currentLabel() string { return c.label(int(c.current.Load())) }

// Stats returns the counters.
func (c *Client) Stats() Stats {
	return Stats{Logins: c.logins.Load(), Requests: c.requests.Load(), Failovers: c.failovers.Load()}
}

// envelope is every answer's body.
type envelope struct {
	Title any             `json:"title"`
	Data  json.RawMessage `json:"data"`
}

// Do sends one authenticated call: path starts with /redapi/v1, hdr holds
// extra headers (list paging), body is marshalled to JSON when not nil and
// the answer's data is decoded into out when not nil. A 401 makes the
// client log in again and retry once.
func (c *Client) Do(ctx context.Context, method, path string, hdr http.Header, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return fmt.Errorf("infinia %s %s: encoding the request: %v", method, path, err)
		}
	}
	tok, err := c.token(ctx)
	if err != nil {
		return err
	}
	err = c.send(ctx, method, path, hdr, raw, tok, out)
	if StatusCode(err) != http.StatusUnauthorized {
		return err
	}
	c.log.Debug("token refused; logging in again", "endpoint", c.currentLabel())
	if tok, err = c.relogin(ctx, tok); err != nil {
		return err
	}
	return c.send(ctx, method, path, hdr, raw, tok, out)
}

// send tries the endpoints in order, starting with the last one that
// answered, until one answers.
func (c *Client) send(ctx context.Context, method, path string, hdr http.Header, raw []byte, tok string, out any) error {
	n := len(c.st.endpoints)
	first := int(c.current.Load())
	u := &UnreachableError{tls: true}
	for i := range n {
		idx := (first + i) % n
		reason, isTLS, err := c.once(ctx, idx, method, path, hdr, raw, tok, out)
		if reason == "" {
			if idx != first {
				c.current.Store(int32(idx))
				c.failovers.Add(1)
				c.log.Warn("switched Infinia API endpoint", "from", c.label(first), "to", c.label(idx))
			}
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("infinia %s: %s %s: %w", c.label(idx), method, path, ctx.Err())
		}
		c.log.Debug("Infinia API endpoint failed", "endpoint", c.label(idx), "reason", reason)
		u.Endpoints = append(u.Endpoints, c.label(idx))
		u.Reasons = append(u.Reasons, reason)
		u.tls = u.tls && isTLS
	}
	return u
}

// once sends the request to endpoint idx. reason is set when the endpoint
// could not serve it and the next one should be tried. Every text that
// leaves it names the endpoint by its label and is redacted.
func (c *Client) once(ctx context.Context, idx int, method, path string, hdr http.Header, raw []byte, tok string, out any) (reason string, isTLS bool, err error) {
	ep, label := c.st.endpoints[idx], c.label(idx)
	rctx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
	defer cancel()
	var rd io.Reader = http.NoBody
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(rctx, method, ep+path, rd)
	if err != nil {
		return "", false, fmt.Errorf("infinia %s: %s %s: %v", label, method, path, c.red.redactErr(err.Error(), err, label))
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	c.requests.Add(1)
	roundtrip.Count(ctx, roundtrip.HTTP)
	resp, err := c.http.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return "", false, fmt.Errorf("infinia %s: %s %s: %w", label, method, path, ctx.Err())
		case tlsProblem(err) != "":
			return c.red.redactErr(tlsProblem(err), err, label), true, nil
		case connectProblem(err) != "":
			return c.red.redactErr(connectProblem(err), err, label), false, nil
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			return fmt.Sprintf("no answer within %s", c.st.cfg.Timeout), false, nil
		}
		// The connection broke mid-call. Every step of the driver's flows
		// is idempotent (409 and 404 are expected answers), so trying the
		// next endpoint is safe.
		return c.red.redactErr(unwrapURLError(err).Error(), err, label), false, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		if ctx.Err() != nil {
			return "", false, fmt.Errorf("infinia %s: %s %s: %w", label, method, path, ctx.Err())
		}
		return "reading the answer: " + c.red.redactErr(unwrapURLError(err).Error(), err, label), false, nil
	}
	var env envelope
	decodeErr := json.Unmarshal(body, &env)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		title := titleOf(env, decodeErr, body)
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return c.red.redact(fmt.Sprintf("HTTP %d %s", resp.StatusCode, title)), false, nil
		}
		return "", false, &StatusError{Code: resp.StatusCode, Title: c.red.redact(title), Method: method, Path: path, Endpoint: label}
	}
	if out == nil {
		return "", false, nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		// The data as it came, for answers whose shape the facts leave
		// open: empty when there is none, never an error.
		if decodeErr == nil {
			*raw = env.Data
		}
		return "", false, nil
	}
	if decodeErr == nil {
		decodeErr = json.Unmarshal(env.Data, out)
	}
	if decodeErr != nil {
		return "", false, fmt.Errorf("infinia %s: %s %s: unexpected answer (HTTP %d): %v", label, method, path, resp.StatusCode, c.red.redact(decodeErr.Error()))
	}
	return "", false, nil
}

// titleOf is the server's reason: the envelope's title, else the start of
// a non-JSON body.
func titleOf(env envelope, decodeErr error, body []byte) string {
	if decodeErr == nil {
		if s, ok := env.Title.(string); ok && s != "" {
			return s
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// unwrapURLError drops net/http's "Get <url>:" wrapping.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
