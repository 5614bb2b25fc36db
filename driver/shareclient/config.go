package shareclient

import (
	"strings"

	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol"
)

// The keys inside the driver's section (nfs, smb or lustre) that only the
// clients have: shareHost as democratic-csi spells it, checkControllerMount
// switchyard's own. The keys the clients share with local-hostpath
// (shareBasePath, controllerBasePath, dirPermissions*, snapshots.*) are
// read by dirvol.Parse.
const (
	subShareHost  = ".shareHost"
	subMountCheck = ".checkControllerMount"
)

// settings is the typed view of a client driver's config.
type settings struct {
	dirvol.Settings        // ShareBase: the share's path on the server (volume_context.share = ShareBase/v/<id>)
	shareHost       string // the server the nodes mount from
	mountCheck      bool   // refuse to work unless controllerBase is on the kind's file system
}

// validate reports every problem in a client driver's config, each naming
// its key. It never panics, whatever types the tree holds.
func (k kind) validate(cfg config.Tree) []config.Problem {
	_, problems := parseSettings(k, cfg)
	return problems
}

func parseSettings(k kind, cfg config.Tree) (settings, []config.Problem) {
	s := settings{mountCheck: true}
	keyShareHost := k.section + subShareHost
	keyMountCheck := k.section + subMountCheck
	var err []config.Problem
	s.Settings, err = dirvol.Parse(cfg, dirvol.Section{
		Key:   k.section,
		Needs: "shareHost, shareBasePath and controllerBasePath",
		BeforeBase: func(cfg config.Tree, add dirvol.Add) {
			s.shareHost = shareHost(cfg, keyShareHost, add)
		},
		AfterBase: func(cfg config.Tree, add dirvol.Add) {
			if v, ok := cfg.Lookup(keyMountCheck); ok && v != nil {
				b, isBool := v.(bool)
				if !isBool {
					add(keyMountCheck, "must be true or false, got %s", dirvol.Describe(v))
				}
				s.mountCheck = b || !isBool
			}
		},
	})
	return s, err
}

// shareHost reads the server name nodes mount from: a host name, an
// address, or for lustre an MGS NID list (10.0.0.1@tcp:10.0.0.2@tcp).
func shareHost(cfg config.Tree, key string, add dirvol.Add) string {
	v, ok := cfg.Lookup(key)
	if !ok || v == nil || v == "" {
		add(key, "required: the server the nodes mount the share from")
		return ""
	}
	h, isString := v.(string)
	if !isString {
		add(key, "must be a host name or address, got %s", dirvol.Describe(v))
		return ""
	}
	h = strings.TrimSpace(h)
	if h == "" || strings.ContainsAny(h, " \t\n/\x00") {
		add(key, "must be a host name or address without spaces or slashes, got %q", h)
		return ""
	}
	return h
}
