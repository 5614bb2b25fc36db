package shareclient

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

// Keys inside the driver's section (nfs, smb or lustre), as democratic-csi
// spells them, except checkControllerMount, which is switchyard's own.
const (
	subShareHost      = ".shareHost"
	subShareBase      = ".shareBasePath"
	subControllerBase = ".controllerBasePath"
	subDirMode        = ".dirPermissionsMode"
	subDirUser        = ".dirPermissionsUser"
	subDirGroup       = ".dirPermissionsGroup"
	subSnapDriver     = ".snapshots.default_driver"
	subMountCheck     = ".checkControllerMount"
)

// snapshotDriverFilecopy is the only democratic-csi snapshot driver
// switchyard implements: a snapshot is a copy of the volume directory.
const snapshotDriverFilecopy = "filecopy"

// settings is the typed view of a client driver's config.
type settings struct {
	shareHost      string // the server the nodes mount from
	shareBase      string // the share's path on the server (volume_context.share = shareBase/v/<id>)
	mountCheck     bool   // refuse to work unless controllerBase is on the kind's file system
	controllerBase string // as this process sees it
	hasMode        bool
	mode           uint32 // permission bits (with setuid/setgid/sticky) for new volume dirs
	uid, gid       int    // -1: leave unchanged
	snapshotDriver string // default snapshot driver; always "filecopy" once valid
	idHash         string // "", md5, crc8, crc16, crc32
	instanceID     string
}

// validate reports every problem in a client driver's config, each naming
// its key. It never panics, whatever types the tree holds.
func (k kind) validate(cfg config.Tree) []config.Problem {
	_, problems := parseSettings(k, cfg)
	return problems
}

func parseSettings(k kind, cfg config.Tree) (settings, []config.Problem) {
	s := settings{uid: -1, gid: -1, snapshotDriver: snapshotDriverFilecopy, mountCheck: true}
	sectionKey := k.section
	keyShareHost := sectionKey + subShareHost
	keyShareBase := sectionKey + subShareBase
	keyControllerBase := sectionKey + subControllerBase
	keyDirMode := sectionKey + subDirMode
	keyDirUser := sectionKey + subDirUser
	keyDirGroup := sectionKey + subDirGroup
	keySnapDriver := sectionKey + subSnapDriver
	keyMountCheck := sectionKey + subMountCheck
	var ps []config.Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, config.Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	if v, ok := cfg.Lookup(keyInstanceID); ok && v != nil {
		id, ok := cfg.String(keyInstanceID)
		if !ok {
			add(keyInstanceID, "must be a string, got %s", describe(v))
		}
		s.instanceID = id
	}

	if v, ok := cfg.Lookup(keyIDHash); ok && v != nil {
		strategy, _ := cfg.String(keyIDHash)
		switch lower := strings.ToLower(strings.TrimSpace(strategy)); lower {
		case "":
			if _, isString := v.(string); !isString {
				add(keyIDHash, "must be one of md5, crc8, crc16, crc32, got %s", describe(v))
			}
		case "md5", "crc8", "crc16", "crc32":
			s.idHash = lower
		default:
			add(keyIDHash, "unknown id hash strategy %q: use md5, crc8, crc16 or crc32 (or leave it empty)", strategy)
		}
	}
	if v, ok := cfg.Lookup(keyIDTemplate); ok && v != nil && v != "" {
		add(keyIDTemplate, "is not supported by switchyard (volume ids are the volume name, optionally hashed with %s); remove it", keyIDHash)
	}

	v, ok := cfg.Lookup(sectionKey)
	if !ok || v == nil {
		add(sectionKey, "required: the %s section must set shareHost, shareBasePath and controllerBasePath", sectionKey)
		return s, ps
	}
	if cfg.Sub(sectionKey) == nil {
		add(sectionKey, "must be a map of keys, got %s", describe(v))
		return s, ps
	}

	s.shareHost = shareHost(cfg, keyShareHost, add)
	s.shareBase = basePath(cfg, keyShareBase, add)
	s.controllerBase = basePath(cfg, keyControllerBase, add)
	if v, ok := cfg.Lookup(keyMountCheck); ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			add(keyMountCheck, "must be true or false, got %s", describe(v))
		}
		s.mountCheck = b || !isBool
	}

	if v, ok := cfg.Lookup(keyDirMode); ok && v != nil && v != "" {
		mode, err := parseMode(v)
		if err != nil {
			add(keyDirMode, "%v", err)
		} else {
			s.hasMode, s.mode = true, mode
		}
	}
	s.uid = owner(cfg, keyDirUser, "uid", add)
	s.gid = owner(cfg, keyDirGroup, "gid", add)

	if v, ok := cfg.Lookup(keySnapDriver); ok && v != nil && v != "" {
		name, isString := v.(string)
		switch {
		case !isString:
			add(keySnapDriver, "must be a string (filecopy), got %s", describe(v))
		case name == snapshotDriverFilecopy:
		case name == "restic" || name == "kopia":
			add(keySnapDriver, "snapshot driver %q is not supported by switchyard; only filecopy is (a snapshot is a copy of the volume directory)", name)
		default:
			add(keySnapDriver, "unknown snapshot driver %q: only filecopy is supported", name)
		}
	}
	return s, ps
}

// shareHost reads the server name nodes mount from: a host name, an
// address, or for lustre an MGS NID list (10.0.0.1@tcp:10.0.0.2@tcp).
func shareHost(cfg config.Tree, key string, add func(string, string, ...any)) string {
	v, ok := cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		add(key, "required: the server the nodes mount the share from")
		return ""
	}
	h, isString := v.(string)
	if !isString {
		add(key, "must be a host name or address, got %s", describe(v))
		return ""
	}
	h = strings.TrimSpace(h)
	if h == "" || strings.ContainsAny(h, " \t\n/\x00") {
		add(key, "must be a host name or address without spaces or slashes, got %q", h)
		return ""
	}
	return h
}

// basePath reads an absolute directory path. democratic-csi strips a
// trailing slash; filepath.Clean does that and more.
func basePath(cfg config.Tree, key string, add func(string, string, ...any)) string {
	v, ok := cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		add(key, "required: the absolute path of the directory that holds the volumes")
		return ""
	}
	p, isString := v.(string)
	if !isString {
		add(key, "must be an absolute path, got %s", describe(v))
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
	return 0, fmt.Errorf("must be an octal mode written as a string such as \"0777\", got %s", describe(v))
}

// owner reads dirPermissionsUser/Group: a numeric id (number or numeric
// string). Like democratic-csi, 0 and empty mean "leave unchanged".
func owner(cfg config.Tree, key, what string, add func(string, string, ...any)) int {
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
		add(key, "must be a numeric %s, got %s", what, describe(v))
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

// describe names a value's YAML kind for error messages.
func describe(v any) string {
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
