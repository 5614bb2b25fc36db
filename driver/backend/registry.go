package backend

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

var (
	mu    sync.RWMutex
	types = map[string]*Type{}
)

// Register adds a driver type; backends call it from init. Registering a
// name twice is a programming error and panics at start-up.
func Register(t Type) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range append([]string{t.Name}, t.Aliases...) {
		if _, dup := types[n]; dup {
			panic(fmt.Sprintf("backend: driver type %q registered twice", n))
		}
		tt := t
		types[n] = &tt
	}
}

// Lookup returns the driver type registered under name (or an alias).
func Lookup(name string) (*Type, bool) {
	mu.RLock()
	defer mu.RUnlock()
	t, ok := types[name]
	return t, ok
}

// Names lists every registered driver name, aliases included, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(types))
	for n := range types {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ProxyIncompatible names the democratic-csi driver types that cannot sit
// behind the proxy, with the reason (docs/proxy.md, "Driver types that
// cannot be connections").
var ProxyIncompatible = map[string]string{
	"proxy":                      "a proxy cannot route to another proxy",
	"objectivefs":                "its NodeStageVolume needs the driver config, which node calls never see",
	"zfs-local-ephemeral-inline": "inline ephemeral volumes never pass through CreateVolume, so no handle can carry the connection",
}

// Planned lists democratic-csi driver types switchyard will serve but this
// build does not have yet: configs naming them get a clear error rather than
// "unknown driver".
var Planned = []string{
	"synology-iscsi", "nfs-client", "smb-client", "lustre-client", "node-manual",
	"zfs-local-dataset", "zfs-local-zvol",
}

// Unknown explains why name is not a driver type this build can run: one
// planned for a later version, or one switchyard has never heard of.
func Unknown(name string) string {
	if slices.Contains(Planned, name) {
		return fmt.Sprintf("%s is not available in this build of switchyard yet", name)
	}
	return fmt.Sprintf("unknown driver %q; known: %s", name, strings.Join(Names(), ", "))
}
