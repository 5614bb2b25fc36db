// Package truenas is a simulator of the TrueNAS middleware (middlewared):
// the API server that TrueNAS SCALE / Community Edition exposes and that the
// freenas-api-* / truenas-api-* backends talk to. It is started as one
// release — 24.10.2, 25.04.2, 25.10.1 or 26.04.0 (or a later patch of one of
// them) — and behaves like that release on the wire, over one shared ZFS
// model (simulators/zfsmodel) that its services (simulators/truenas/storage,
// simulators/truenas/sharing) and an optional SSH endpoint
// (simulators/zfsssh) act on.
//
// Transports, all on one HTTP listener (plain, TLS, or both):
//
//   - REST v2.0 under /api/v2.0 (24.10, 25.04, 25.10; every path answers 404
//     on 26.04, where REST was removed). Routes follow middlewared's
//     restful.py: GET /a/b is a.b.query (filters from the query string) or
//     a.b.config, POST /a/b is a.b.create, GET|PUT|DELETE /a/b/id/<id> are
//     query-by-id, update and delete, other methods are POST /a/b/<method>
//     (GET for methods without parameters and for query methods). Auth is
//     HTTP basic or "Authorization: Bearer <API key>"; missing or wrong
//     credentials are 401. Errors: CallError 422 {"message","errno"},
//     validation errors 422 {"<attribute>":[{"message","errno"}]}, a missing
//     id on GET 404, anything else 500.
//   - JSON-RPC 2.0 over WebSocket at /api/current and /api/v<version> (the
//     versions GET /api/versions lists), 25.04 and later. Calls on one
//     connection run concurrently and are answered in completion order;
//     more than MaxConcurrentCalls in flight is error -32000. Error codes
//     are middlewared's: -32700, -32600, -32601, -32602 (validation),
//     -32001 (CallError, including ENOTAUTHENTICATED before login), and
//     -32603 for a failure inside the simulator itself (a Go panic or a
//     plain Go error), which a real server never sends.
//   - The legacy DDP-style protocol at /websocket (every release; the only
//     WebSocket protocol on 24.10): connect/connected, method/result,
//     ping/pong and sub/unsub for job events.
//
// Authentication (auth.login, auth.login_with_api_key, auth.login_ex) is per
// WebSocket connection; from 25.04.2 an API key presented over a non-TLS
// transport is revoked, as the real server does, and stays unusable until
// ReissueAPIKey. Methods flagged as jobs run in the job manager (core.get_jobs,
// core.job_wait, core.job_abort); a job call answers its job id unless the
// connection chose core.set_options({"legacy_jobs": false}) (25.10+).
//
// What each release has comes from the middleware's own source: package
// census holds, per release, the public methods with their job flags,
// parameter names and API model fields, derived at a release tag by
// census/gen_census.py (make truenas-census). The census tests hold every
// served method against it; a method the release has but the simulator
// does not serve answers as the middleware answers an unknown one. A fresh
// system is a fresh TrueNAS: no iSCSI portal, initiator group or NVMe-oF
// port, the services of its services table stopped (lab/truenashost sets
// them up as an admin does).
//
// Tests drive failures through Faults (latency, error rates, dropped
// connections), Restart (every connection and in-flight call dropped, state
// kept) and ExpireSessions, and inspect Calls and Stats.
package truenas
