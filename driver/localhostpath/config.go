package localhostpath

import (
	"github.com/switchyard-csi/switchyard/driver/config"
	"github.com/switchyard-csi/switchyard/driver/dirvol"
)

// sectionKey is the config section, as democratic-csi spells it. Its keys
// (shareBasePath, controllerBasePath, dirPermissions*, snapshots.*) are
// the ones every directory backend shares: dirvol.Parse reads them.
const sectionKey = "local-hostpath"

// Validate reports every problem in a local-hostpath config, each naming
// its key. It never panics, whatever types the tree holds.
func Validate(cfg config.Tree) []config.Problem {
	_, problems := parseSettings(cfg)
	return problems
}

func parseSettings(cfg config.Tree) (dirvol.Settings, []config.Problem) {
	return dirvol.Parse(cfg, dirvol.Section{Key: sectionKey, Needs: "shareBasePath and controllerBasePath"})
}
