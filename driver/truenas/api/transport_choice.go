package api

import (
	"context"
	"errors"
)

// pick returns the transport, choosing it on first use: the choice is made
// once per Client (a permanent refusal is remembered too); failures that
// may pass (unreachable, TLS, cancelled) leave it open for the next call.
func (c *Client) pick(ctx context.Context) (transport, error) {
	if t, err := c.chosenTransport(); t != nil || err != nil {
		return t, err
	}
	select {
	case c.decide <- struct{}{}:
	case <-ctx.Done():
		return nil, c.cancelled("connect", "while choosing the transport", false, ctx.Err())
	}
	defer func() { <-c.decide }()
	if t, err := c.chosenTransport(); t != nil || err != nil {
		return t, err
	}
	t, err := c.choose(ctx)
	if t != nil {
		c.mu.Lock()
		c.chosen = t
		c.mu.Unlock()
		c.log.Debug("truenas transport chosen", "transport", t.name())
	}
	if errors.Is(err, ErrPlaintextAPIKey) {
		c.mu.Lock()
		c.refusal = err
		c.mu.Unlock()
	}
	return t, err
}

func (c *Client) chosenTransport() (transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chosen, c.refusal
}

// choose probes the server. It may return a transport together with an
// error (REST chosen, but the credentials were refused): the choice
// stands and the error is the call's.
func (c *Client) choose(ctx context.Context) (transport, error) {
	keyInClear := c.st.useAPIKey && c.st.plaintext() && !c.st.cfg.AllowPlaintextAPIKey
	switch c.st.transport {
	case TransportWebSocket:
		// Only 25.04+ has the WebSocket, so no need to ask: refuse now.
		if keyInClear {
			return nil, c.plaintextRefusal("ws://")
		}
		ws, err := c.ws.handshake(ctx)
		if errors.Is(err, errNoWebSocket) {
			return nil, c.fail(ErrUnsupported, "%s: no JSON-RPC WebSocket at /api/current (TrueNAS before 25.04 has none); set %s: auto or rest",
				c.st.wsURL(), keyTransport)
		}
		if err != nil {
			return nil, err
		}
		c.ws.adopt(ws)
		return c.ws, nil

	case TransportREST:
		if keyInClear {
			// The WebSocket's presence (no credentials needed to see it)
			// says 25.04+, where REST over http revokes the key as well.
			ws, err := c.ws.handshake(ctx)
			switch {
			case err == nil:
				_ = ws.CloseNow()
				return nil, c.plaintextRefusal("http://")
			case !errors.Is(err, errNoWebSocket):
				return nil, err
			}
		}
		return c.chooseREST(ctx, "REST /api/v2.0 is not served (TrueNAS 26 removed it); set "+keyTransport+": websocket or auto")

	default: // auto
		ws, err := c.ws.handshake(ctx)
		switch {
		case err == nil:
			if keyInClear {
				_ = ws.CloseNow()
				return nil, c.plaintextRefusal("ws://")
			}
			c.ws.adopt(ws)
			return c.ws, nil
		case errors.Is(err, errNoWebSocket):
			c.log.Debug("truenas has no /api/current WebSocket; using REST", "reason", err.Error())
			return c.chooseREST(ctx, "serves neither the JSON-RPC WebSocket (/api/current) nor REST (/api/v2.0): is this a TrueNAS?")
		default:
			return nil, err
		}
	}
}

func (c *Client) chooseREST(ctx context.Context, missing string) (transport, error) {
	if err := c.acquire(ctx, "system.version"); err != nil {
		return nil, err
	}
	found, err := c.rest.probe(ctx)
	c.release()
	switch {
	case !found:
		return nil, c.fail(ErrUnsupported, "%s", missing)
	case err == nil || errors.Is(err, ErrAuth):
		return c.rest, err
	default:
		return nil, err
	}
}

// plaintextRefusal explains why the API key stays home.
func (c *Client) plaintextRefusal(scheme string) error {
	return c.fail(ErrPlaintextAPIKey,
		"refusing to send the API key over plain %s: this server is TrueNAS 25.04 or later, and from 25.04.2 TrueNAS revokes "+
			"an API key presented without TLS (it would stop working everywhere until reissued). Use %s: https (port 443), "+
			"or set %s: true to send it anyway", scheme, keyProtocol, keyAllowPlaintextAPIKey)
}
