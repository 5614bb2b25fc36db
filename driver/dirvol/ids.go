package dirvol

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/volumeid"
)

// MaxIDLen is the longest volume or snapshot id a directory backend returns. It
// leaves room for the proxy's decoration (`v:<connection>/`) within CSI's
// 128-byte limit.
const MaxIDLen = 64

// volumeID turns a CreateVolume name into the volume id (the directory
// name under v/).
//
// Without an id hash strategy the name must be democratic-csi's volume id
// alphabet ([A-Za-z0-9_-], starting with a letter or digit) and is the id
// itself when it is at most MaxIDLen bytes; a longer name becomes its first
// 31 bytes, "-" and the md5 of the whole name in hex (64 bytes).
//
// With a strategy the id is the hash of the name, exactly as democratic-csi
// computes it (see volumeid.Hash), and like democratic-csi any name is accepted.
func volumeID(name, strategy string) (string, error) {
	return volumeid.Volume(name, strategy, MaxIDLen)
}

// snapshotID turns a CreateSnapshot name into the snapshot id (the
// directory name under s/): democratic-csi's snapshot name alphabet
// [A-Za-z0-9_-:.+], not starting with "." (dot names are switchyard's
// temporary directories), shortened like volume names.
func snapshotID(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("name is required")
	}
	if bad := volumeid.InvalidChars(name, volumeid.IsSnapshotChar); bad != "" {
		return "", fmt.Errorf("snapshot name %q contains invalid characters %q: only A-Z, a-z, 0-9, _, -, :, . and + are allowed", name, bad)
	}
	if name[0] == '.' {
		return "", fmt.Errorf("snapshot name %q must not begin with \".\"", name)
	}
	return volumeid.Shorten(name, MaxIDLen), nil
}

// safeComponent reports whether an id from a request may be used as one
// path component under a base directory: not empty, not "." or "..", no
// "/" and no NUL. Ids that fail can name no volume or snapshot.
func safeComponent(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\x00") &&
		len(id) <= 255 // NAME_MAX: a longer name cannot exist on disk
}

// isTemporary reports whether a directory entry is one of switchyard's
// temporary directories (or any other dot entry), never a volume or snapshot.
func isTemporary(name string) bool { return strings.HasPrefix(name, ".") }

// snapshotRef is a snapshot id from a request, resolved to its directory.
type snapshotRef struct {
	dir    string // directory name under s/ ("" when the id names none)
	driver string // democratic-csi snapshot driver named by the id
}

// parseSnapshotID resolves a snapshot id: switchyard's own ids are the
// directory name; democratic-csi's ids are URL query strings
// `snapshot_driver=filecopy&snapshot_id=<dir>`. A query without
// snapshot_driver is, as in democratic-csi, a plain filecopy directory name.
func parseSnapshotID(id string) snapshotRef {
	ref := snapshotRef{dir: id, driver: snapshotDriverFilecopy}
	if strings.Contains(id, "=") {
		if q, err := url.ParseQuery(id); err == nil && q.Get("snapshot_driver") != "" {
			ref = snapshotRef{dir: q.Get("snapshot_id"), driver: q.Get("snapshot_driver")}
		}
	}
	if !safeComponent(ref.dir) {
		ref.dir = ""
	}
	return ref
}

// legacySnapshotID is democratic-csi's id for a filecopy snapshot directory.
func legacySnapshotID(dir string) string {
	return url.Values{"snapshot_driver": {snapshotDriverFilecopy}, "snapshot_id": {dir}}.Encode()
}
