// Package api is switchyard's client for the TrueNAS middleware API, the
// one every freenas-api-* / truenas-api-* backend talks through.
//
// It speaks both transports a TrueNAS has had: JSON-RPC 2.0 over one
// multiplexed WebSocket at /api/current (25.04 and later; the only API
// left in 26) and REST at /api/v2.0 (24.10 and older, deprecated after).
// By default it tries the WebSocket and falls back to REST when the server
// has none, once per Client. Callers see one interface either way: Call
// takes a middleware method name and its positional parameters, and the
// REST transport maps them to the HTTP verb, path, query and body the
// middleware's restful layer expects. CallJob waits for job methods
// (directly from 25.10, by polling core.get_jobs before).
//
// The client logs in after every (re)connect, re-authenticates when a
// session expires, retries calls the server refused for being too many at
// once, and holds a refused login for a few seconds so a storm of CSI
// calls cannot hammer the server with bad credentials. It refuses to send
// an API key over plain text to a server new enough to revoke it for
// that. Server failures are *Error values (classified by IsNotFound,
// IsExists, IsValidation); connection failures match the sentinels
// ErrAuth, ErrUnreachable, ErrConnectionLost, ErrTLS, ErrPlaintextAPIKey
// and ErrUnsupported with errors.Is. No error or log line ever carries a
// password, an API key or an Authorization header.
package api
