// Package middleware holds what the TrueNAS simulator's transports (REST v2.0 and
// JSON-RPC 2.0 over WebSocket) and its services (pool.dataset, sharing.*,
// iscsi.*, nvmet.*, ...) share: the middleware version being simulated,
// the method registry, the per-call context and the middleware's error
// kinds. Services return these errors; each transport renders them in its
// own shape (REST status codes and bodies, JSON-RPC error codes and data).
package middleware
