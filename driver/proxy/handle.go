// Package proxy is the multi-backend driver: it routes each CSI call to a
// connection (a backend config file <name>.yaml in a folder), keeps the
// connection in every handle it returns, reloads connection files while
// running, and reports the node's topology and node id (built by driver/nodeid).
package proxy

import (
	"fmt"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/echo"
)

// MaxHandleLen is CSI's limit for volume_id and snapshot_id.
const MaxHandleLen = 128

// MaxConnectionNameLen bounds connection names: a name becomes part of
// every handle and of a file path.
const MaxConnectionNameLen = 63

// Handle kinds: the prefix tells a volume handle from a snapshot handle.
const (
	VolumePrefix   = "v:"
	SnapshotPrefix = "s:"
)

// CheckConnectionName reports why name cannot be a connection name, or nil.
// The rule keeps names safe as file names: 1–63 of [A-Za-z0-9._-],
// starting with a letter or digit (so never "." or "..").
func CheckConnectionName(name string) error {
	if name == "" {
		return fmt.Errorf("connection name is empty")
	}
	if len(name) > MaxConnectionNameLen {
		return fmt.Errorf("connection name %s is %d characters long; at most %d are allowed", echo.Quote(name), len(name), MaxConnectionNameLen)
	}
	if !isAlnum(name[0]) {
		return fmt.Errorf("connection name %s must start with a letter or digit", echo.Quote(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("connection name %s contains %q; only letters, digits, '.', '_' and '-' are allowed", echo.Quote(name), c)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Decorate builds a handle from a prefix, a connection and a backend id.
func Decorate(prefix, conn, id string) string { return prefix + conn + "/" + id }

// Parse splits a handle of the given prefix into connection and backend id.
// ok is false when the handle cannot name any object: wrong or no prefix,
// no '/', an empty part, or an invalid connection name.
func Parse(prefix, handle string) (conn, id string, ok bool) {
	rest, found := strings.CutPrefix(handle, prefix)
	if !found {
		return "", "", false
	}
	conn, id, found = strings.Cut(rest, "/")
	if !found || id == "" || CheckConnectionName(conn) != nil {
		return "", "", false
	}
	return conn, id, true
}

// Resolve is Parse plus migration: a handle without any proxy prefix
// belongs to the default connection when one is configured, so volumes made
// by a single-backend deployment keep working after it switches to the
// proxy. A handle with the other kind's prefix never resolves.
func Resolve(prefix, handle, defaultConn string) (conn, id string, ok bool) {
	if conn, id, ok = Parse(prefix, handle); ok {
		return conn, id, true
	}
	if defaultConn == "" || handle == "" || strings.HasPrefix(handle, VolumePrefix) || strings.HasPrefix(handle, SnapshotPrefix) {
		return "", "", false
	}
	return defaultConn, handle, true
}
