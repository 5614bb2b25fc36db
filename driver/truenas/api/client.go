package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Client talks to one TrueNAS. It is safe for concurrent use; it connects
// on first use, decides the transport once, and reconnects as needed.
type Client struct {
	st     *settings
	log    *slog.Logger
	red    *redactor
	http   *http.Client
	slots  chan struct{} // MaxConcurrentCalls
	authGt authGate

	ws   *wsTransport
	rest *restTransport

	// decide serialises the transport choice; chosen is set once it is made.
	decide  chan struct{}
	mu      sync.Mutex
	chosen  transport
	refusal error // a permanent refusal (plaintext API key) found while deciding
	version *Version

	stats counters
}

// transport is what Call needs from the WebSocket or the REST side.
type transport interface {
	name() string
	call(ctx context.Context, method string, params []any) (json.RawMessage, error)
	// callJob runs a job method and returns its result.
	callJob(ctx context.Context, method string, params []any) (json.RawMessage, error)
	close()
}

// Stats counts a client's work so far (tests and benchmarks read it).
type Stats struct {
	Dials        int // WebSocket handshakes completed (the transport probe included)
	HTTPRequests int // REST requests sent
	Logins       int // login attempts (auth.* calls)
	Reconnects   int // WebSocket connections made to replace a lost one
	Calls        int // Call and CallJob invocations
	JobPolls     int // core.get_jobs polls while waiting for jobs
	BusyRetries  int // calls resent after the server answered -32000 (too many concurrent calls)
}

type counters struct {
	dials, httpRequests, logins, reconnects, calls, jobPolls, busyRetries atomic.Int64
}

// New validates cfg and returns a client; it does no I/O. Errors name the
// httpConnection key at fault. log may be nil.
func New(cfg Config, log *slog.Logger) (*Client, error) {
	st, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	c := &Client{
		st:     st,
		log:    orDiscard(log).With("truenas", st.endpoint),
		red:    newRedactor(cfg),
		http:   newHTTPClient(st),
		slots:  make(chan struct{}, st.cfg.MaxConcurrentCalls),
		decide: make(chan struct{}, 1),
	}
	c.authGt.hold = authFailureHold
	c.ws = newWSTransport(c)
	c.rest = &restTransport{c: c}
	return c, nil
}

// Endpoint is "scheme://host:port", for messages; it never holds credentials.
func (c *Client) Endpoint() string { return c.st.endpoint }

// Call runs one middleware method with positional params and returns its
// raw JSON result. Over the WebSocket a job method returns its job id
// before 25.10 and its result from 25.10 (use CallJob to get the result
// on every version). Timeout bounds the call.
func (c *Client) Call(ctx context.Context, method string, params ...any) (json.RawMessage, error) {
	c.stats.calls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
	defer cancel()
	start := time.Now()
	t, err := c.pick(ctx)
	if err != nil {
		return nil, err
	}
	res, err := t.call(ctx, method, params)
	c.logCall(method, t.name(), start, err)
	return res, err
}

// CallJob runs a job method and waits for the job, returning its result; a
// failed job is an *Error with the job's message. The wait is bounded by
// ctx only (each request inside it by Timeout).
func (c *Client) CallJob(ctx context.Context, method string, params ...any) (json.RawMessage, error) {
	c.stats.calls.Add(1)
	start := time.Now()
	pickCtx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
	t, err := c.pick(pickCtx)
	cancel()
	if err != nil {
		return nil, err
	}
	res, err := t.callJob(ctx, method, params)
	c.logCall(method, t.name(), start, err)
	return res, err
}

// Version returns system.version, parsed; it is asked once and cached.
func (c *Client) Version(ctx context.Context) (Version, error) {
	if v, ok := c.cachedVersion(); ok {
		return v, nil
	}
	raw, err := c.Call(ctx, "system.version")
	if err != nil {
		return Version{}, err
	}
	return c.storeVersion(raw)
}

// Transport reports "websocket" or "rest", deciding it if not yet done.
func (c *Client) Transport(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.st.cfg.Timeout)
	defer cancel()
	t, err := c.pick(ctx)
	if err != nil {
		return "", err
	}
	return t.name(), nil
}

// Stats reports counters for tests and benchmarks.
func (c *Client) Stats() Stats {
	return Stats{
		Dials:        int(c.stats.dials.Load()),
		HTTPRequests: int(c.stats.httpRequests.Load()),
		Logins:       int(c.stats.logins.Load()),
		Reconnects:   int(c.stats.reconnects.Load()),
		Calls:        int(c.stats.calls.Load()),
		JobPolls:     int(c.stats.jobPolls.Load()),
		BusyRetries:  int(c.stats.busyRetries.Load()),
	}
}

// Close drops the WebSocket (failing calls still waiting on it) and idle
// HTTP connections. A later call connects again.
func (c *Client) Close() error {
	c.ws.close()
	c.http.CloseIdleConnections()
	return nil
}

func (c *Client) cachedVersion() (Version, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == nil {
		return Version{}, false
	}
	return *c.version, true
}

func (c *Client) storeVersion(raw json.RawMessage) (Version, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return Version{}, c.fail(nil, "system.version answered %.100s, not a version string", string(raw))
	}
	v, err := ParseVersion(s)
	if err != nil {
		return Version{}, c.fail(nil, "system.version: %v", err)
	}
	c.mu.Lock()
	c.version = &v
	c.mu.Unlock()
	return v, nil
}

// acquire takes one of MaxConcurrentCalls slots.
func (c *Client) acquire(ctx context.Context, method string) error {
	select {
	case c.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return c.cancelled(method, "waiting for a free call slot", false, ctx.Err())
	}
}

func (c *Client) release() { <-c.slots }

func (c *Client) logCall(method, transport string, start time.Time, err error) {
	if !c.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []any{"method", method, "transport", transport, "duration", time.Since(start)}
	if err != nil {
		attrs = append(attrs, "error", err.Error()) // already redacted
	}
	c.log.Debug("truenas call", attrs...)
}

// fail builds a client error of kind (nil for none) whose text starts with
// the endpoint and has every credential removed.
func (c *Client) fail(kind error, format string, args ...any) error {
	e := &clientError{msg: c.red.redact("truenas " + c.st.endpoint + ": " + errorf(format, args...))}
	if kind != nil {
		e.kinds = []error{kind}
	}
	return e
}

// cancelled reports ctx's end for method; sent says whether the request
// had left (so it may have taken effect).
func (c *Client) cancelled(method, what string, sent bool, ctxErr error) error {
	detail := "cancelled " + what
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		detail = "timed out " + what
	}
	if sent {
		detail += " (the call may have taken effect)"
	}
	return &clientError{
		msg:   "truenas " + c.st.endpoint + ": " + method + ": " + detail + ": " + ctxErr.Error(),
		kinds: []error{ctxErr},
	}
}

// serverError completes and redacts a server failure.
func (c *Client) serverError(e *Error) *Error {
	e.Endpoint = c.st.endpoint
	return c.red.redactError(e)
}
