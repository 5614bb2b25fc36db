// Package api is switchyard's client for the DDN Infinia ("RED") REST API
// at /redapi/v1, as far as the infinia-nvmeof backend needs it: services,
// datasets, block volumes, NVMe-oF subsystems and their hosts, instances
// and capacity.
//
// One Client serves one service account (cluster/tenant/account). It keeps
// one HTTP transport (one keep-alive connection pool, bounded per host),
// logs in once and shares the JWT between concurrent calls (a single login
// in flight), logs in again when the server answers 401 and retries the
// call once, and refreshes the token shortly before its lifetime ends.
// Several API endpoints are tried in order when one cannot be reached; the
// one that answered is used first from then on.
//
// Server refusals are *StatusError values; failures to reach any endpoint
// match ErrUnreachable (and ErrTLS for certificate problems) with
// errors.Is. No error or log line carries the password or the token.
package api
