package dirvol

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// Config keys outside the driver's section, as democratic-csi spells them.
const (
	keyIDHash     = "_private.csi.volume.idHash.strategy"
	keyIDTemplate = "_private.csi.volume.idTemplate"
	keyInstanceID = "instance_id"
)

// SnapshotDriverFilecopy is the only democratic-csi snapshot driver
// switchyard implements: a snapshot is a copy of the volume directory.
const SnapshotDriverFilecopy = "filecopy"

const snapshotDriverFilecopy = SnapshotDriverFilecopy

// Settings is the typed view of the keys democratic-csi's local-hostpath
// and client drivers (nfs-client, smb-client, lustre-client) share: the
// same names, inside each driver's own section.
type Settings struct {
	ShareBase      string // as the node sees it (volume_context path or share)
	ControllerBase string // as this process sees it
	HasMode        bool
	Mode           uint32 // permission bits (with setuid/setgid/sticky) for new volume dirs
	UID, GID       int    // -1: leave unchanged
	SnapshotDriver string // default snapshot driver; always "filecopy" once valid
	IDHash         string // "", md5, crc8, crc16, crc32
	InstanceID     string
}

// Add records a config problem at key.
type Add func(key, format string, args ...any)

// Section describes a driver's config section for Parse.
type Section struct {
	Key string // the section: local-hostpath, nfs, smb, lustre
	// Needs lists the section's required keys for the message when the
	// section is missing ("shareBasePath and controllerBasePath").
	Needs string
	// BeforeBase and AfterBase read the driver's own keys, before
	// shareBasePath and after controllerBasePath (so problems keep the
	// order of the keys in democratic-csi's examples).
	BeforeBase, AfterBase func(cfg config.Tree, add Add)
}

// Parse reads the shared keys and calls the section's own readers,
// collecting every problem, each naming its key. It never panics, whatever
// types the tree holds.
func Parse(cfg config.Tree, sec Section) (Settings, []config.Problem) {
	s := Settings{UID: -1, GID: -1, SnapshotDriver: snapshotDriverFilecopy}
	sectionKey := sec.Key
	keyShareBase := sectionKey + ".shareBasePath"
	keyControllerBase := sectionKey + ".controllerBasePath"
	keyDirMode := sectionKey + ".dirPermissionsMode"
	keyDirUser := sectionKey + ".dirPermissionsUser"
	keyDirGroup := sectionKey + ".dirPermissionsGroup"
	keySnapDriver := sectionKey + ".snapshots.default_driver"
	var ps []config.Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, config.Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	if v, ok := cfg.Lookup(keyInstanceID); ok && v != nil {
		id, ok := cfg.String(keyInstanceID)
		if !ok {
			add(keyInstanceID, "must be a string, got %s", Describe(v))
		}
		s.InstanceID = id
	}

	if v, ok := cfg.Lookup(keyIDHash); ok && v != nil {
		strategy, _ := cfg.String(keyIDHash)
		switch lower := strings.ToLower(strings.TrimSpace(strategy)); lower {
		case "":
			if _, isString := v.(string); !isString {
				add(keyIDHash, "must be one of md5, crc8, crc16, crc32, got %s", Describe(v))
			}
		case "md5", "crc8", "crc16", "crc32":
			s.IDHash = lower
		default:
			add(keyIDHash, "unknown id hash strategy %q: use md5, crc8, crc16 or crc32 (or leave it empty)", strategy)
		}
	}
	if v, ok := cfg.Lookup(keyIDTemplate); ok && v != nil && v != "" {
		add(keyIDTemplate, "is not supported by switchyard (volume ids are the volume name, optionally hashed with %s); remove it", keyIDHash)
	}

	v, ok := cfg.Lookup(sectionKey)
	if !ok || v == nil {
		add(sectionKey, "required: the %s section must set %s", sectionKey, sec.Needs)
		return s, ps
	}
	if cfg.Sub(sectionKey) == nil {
		add(sectionKey, "must be a map of keys, got %s", Describe(v))
		return s, ps
	}

	if sec.BeforeBase != nil {
		sec.BeforeBase(cfg, add)
	}
	s.ShareBase = basePath(cfg, keyShareBase, add)
	s.ControllerBase = basePath(cfg, keyControllerBase, add)
	if sec.AfterBase != nil {
		sec.AfterBase(cfg, add)
	}

	if v, ok := cfg.Lookup(keyDirMode); ok && v != nil && v != "" {
		mode, err := parseMode(v)
		if err != nil {
			add(keyDirMode, "%v", err)
		} else {
			s.HasMode, s.Mode = true, mode
		}
	}
	s.UID = owner(cfg, keyDirUser, "uid", add)
	s.GID = owner(cfg, keyDirGroup, "gid", add)

	if v, ok := cfg.Lookup(keySnapDriver); ok && v != nil && v != "" {
		name, isString := v.(string)
		switch {
		case !isString:
			add(keySnapDriver, "must be a string (filecopy), got %s", Describe(v))
		case name == snapshotDriverFilecopy:
		case name == "restic" || name == "kopia":
			add(keySnapDriver, "snapshot driver %q is not supported by switchyard; only filecopy is (a snapshot is a copy of the volume directory)", name)
		default:
			add(keySnapDriver, "unknown snapshot driver %q: only filecopy is supported", name)
		}
	}
	return s, ps
}

// basePath reads an absolute directory path. democratic-csi strips a
// trailing slash; filepath.Clean does that and more.
func basePath(cfg config.Tree, key string, add Add) string {
	v, ok := cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		add(key, "required: the absolute path of the directory that holds the volumes")
		return ""
	}
	p, isString := v.(string)
	if !isString {
		add(key, "must be an absolute path, got %s", Describe(v))
		return ""
	}
	if strings.ContainsRune(p, 0) {
		add(key, "must not contain a NUL byte")
		return ""
	}
	if !filepath.IsAbs(p) {
		add(key, "must be an absolute path, got %q", p)
		return ""
	}
	p = filepath.Clean(p)
	if p == "/" {
		add(key, "must not be / (volumes would be made in %s)", "/v")
		return ""
	}
	return p
}

// parseMode reads dirPermissionsMode. A string is octal ("0777", "755",
// "0o2775"), as democratic-csi passes it to chmod. A number is the mode
// value itself (YAML reads an unquoted 0777 as 511), which is also what
// democratic-csi does with a number; quote the value to be safe.
func parseMode(v any) (uint32, error) {
	const maxMode = 0o7777
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		s = strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
		n, err := strconv.ParseUint(s, 8, 32)
		if err != nil || n > maxMode {
			return 0, fmt.Errorf("must be an octal mode such as \"0777\" or \"0750\", got %q", x)
		}
		return uint32(n), nil
	case json.Number, int, int64, float64:
		n, ok := integer(x)
		if !ok || n < 0 || n > maxMode {
			return 0, fmt.Errorf("must be an octal mode written as a string such as \"0777\", got %v", x)
		}
		return uint32(n), nil
	}
	return 0, fmt.Errorf("must be an octal mode written as a string such as \"0777\", got %s", Describe(v))
}

// owner reads dirPermissionsUser/Group: a numeric id (number or numeric
// string). Like democratic-csi, 0 and empty mean "leave unchanged".
func owner(cfg config.Tree, key, what string, add Add) int {
	v, ok := cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		return -1
	}
	var n int64
	switch x := v.(type) {
	case string:
		var err error
		n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			add(key, "must be a numeric %s, got %q (names are not resolved)", what, x)
			return -1
		}
	case json.Number, int, int64, float64:
		var isInt bool
		n, isInt = integer(x)
		if !isInt {
			add(key, "must be a numeric %s, got %v", what, x)
			return -1
		}
	default:
		add(key, "must be a numeric %s, got %s", what, Describe(v))
		return -1
	}
	if n < 0 || n >= math.MaxUint32 {
		add(key, "must be a %s between 0 and %d, got %d", what, uint32(math.MaxUint32-1), n)
		return -1
	}
	if n == 0 {
		return -1
	}
	return int(n)
}

func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

// Describe names a value's YAML kind for error messages.
func Describe(v any) string {
	switch x := v.(type) {
	case map[string]any, config.Tree:
		return "a map"
	case []any:
		return "a list"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%v", v)
}
