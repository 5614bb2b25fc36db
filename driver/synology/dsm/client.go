// Package dsm is the client of Synology's DSM Web API: one session per
// client (login on first use, one re-login when DSM says the session
// timed out or is unknown), every call a POST to /webapi/entry.cgi whose
// answer is DSM's {success, data | error: {code}} envelope.
//
// Calls are POSTs with form bodies (DSM takes the same parameters as a
// GET's query string) so that the password and the session id never
// appear in a URL, where proxies and access logs would keep them.
package dsm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-csi/switchyard/driver/metrics/roundtrip"
)

// Config is how to reach DSM (democratic-csi's httpConnection).
type Config struct {
	Protocol      string // http or https
	Host          string
	Port          int
	Username      string
	Password      string
	Session       string // the session name sent with login
	AllowInsecure bool   // skip TLS verification
	Timeout       time.Duration
}

// Client talks to one DSM. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
	hc   *http.Client

	mu  sync.Mutex // guards sid; held during login
	sid string

	logins int64
}

// New makes a client; nothing is contacted.
func New(cfg Config) *Client {
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Keep a connection per concurrent call: the default 2 idle ones
	// would make every third concurrent call a new TLS handshake.
	tr.MaxIdleConnsPerHost = 32
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.AllowInsecure, MinVersion: tls.VersionTLS12} //nolint:gosec // httpConnection.allowInsecure asks for it
	return &Client{
		cfg:  cfg,
		base: fmt.Sprintf("%s://%s/webapi/", cfg.Protocol, hostPort(cfg.Host, cfg.Port)),
		hc:   &http.Client{Transport: tr, Timeout: cfg.Timeout},
	}
}

func hostPort(h string, p int) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("%s:%d", h, p)
}

// Endpoint is protocol://host:port, for messages.
func (c *Client) Endpoint() string { return strings.TrimSuffix(c.base, "/webapi/") }

// Close drops idle connections (the session is left to expire: logging
// out would end the session of other clients with the same name).
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Logins is how many times the client logged in (tests).
func (c *Client) Logins() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logins
}

// Call runs api.method at version with params and decodes data into out
// (nil: ignored). A session that DSM reports timed out or unknown is
// renewed once and the call repeated.
func (c *Client) Call(ctx context.Context, api, method string, version int, params url.Values, out any) error {
	sid, err := c.session(ctx)
	if err != nil {
		return err
	}
	err = c.do(ctx, "entry.cgi", api, method, version, params, sid, out)
	var de *Error
	if errors.As(err, &de) && de.SessionLost() {
		c.forget(sid)
		if sid, err = c.session(ctx); err != nil {
			return err
		}
		err = c.do(ctx, "entry.cgi", api, method, version, params, sid, out)
	}
	return err
}

func (c *Client) forget(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid == sid {
		c.sid = ""
	}
}

// session returns the current sid, logging in when there is none.
func (c *Client) session(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid != "" {
		return c.sid, nil
	}
	p := url.Values{"account": {c.cfg.Username}, "passwd": {c.cfg.Password}, "format": {"sid"}}
	if c.cfg.Session != "" {
		p.Set("session", c.cfg.Session)
	}
	var d struct {
		Sid string `json:"sid"`
	}
	if err := c.do(ctx, "auth.cgi", "SYNO.API.Auth", "login", 6, p, "", &d); err != nil {
		return "", err
	}
	if d.Sid == "" {
		return "", &Error{API: "SYNO.API.Auth", Method: "login", Code: -1, Detail: "login answered no sid"}
	}
	c.sid = d.Sid
	c.logins++
	return c.sid, nil
}

// do sends one request and reads its envelope.
func (c *Client) do(ctx context.Context, cgi, api, method string, version int, params url.Values, sid string, out any) error {
	form := url.Values{}
	for k, v := range params {
		form[k] = v
	}
	form.Set("api", api)
	form.Set("method", method)
	form.Set("version", fmt.Sprint(version))
	if sid != "" {
		form.Set("_sid", sid)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+cgi, strings.NewReader(form.Encode()))
	if err != nil {
		return &Error{API: api, Method: method, Code: -1, Detail: err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "switchyard")
	roundtrip.Count(ctx, roundtrip.HTTP)
	resp, err := c.hc.Do(req)
	if err != nil {
		return &TransportError{Endpoint: c.Endpoint(), Err: redact(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return &TransportError{Endpoint: c.Endpoint(), Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &TransportError{Endpoint: c.Endpoint(), Err: fmt.Errorf("HTTP %d from %s %s", resp.StatusCode, api, method)}
	}
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return &Error{API: api, Method: method, Code: -1, Detail: "the answer is not DSM's JSON envelope: " + err.Error()}
	}
	if !env.Success {
		return &Error{API: api, Method: method, Code: env.Error.Code}
	}
	if out != nil && len(env.Data) > 0 && string(env.Data) != "null" {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return &Error{API: api, Method: method, Code: -1, Detail: "unexpected data: " + err.Error()}
		}
	}
	return nil
}

// redact strips the request URL from a transport error (it carries no
// secret since calls are POSTs, but stays short).
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
