package proxy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/switchyard-csi/switchyard/driver/config"
)

// checkLabelSets is `config check` for connection sets. Labels in
// connection files (proxy.labels) exist to form sets through a
// StorageClass's connectionSelector, so each label value names a set: one
// whose members are of different families (an NFS and an iSCSI
// connection) could never serve a volume, and CreateVolume would refuse
// it. Sets written as `connections: a,b` live in StorageClasses, which
// config check does not see; CreateVolume checks them the same way.
func checkLabelSets(ccs []*connConfig) config.Problems {
	type member struct{ name, file, typ string }
	groups := map[string][]member{}
	for _, cc := range ccs {
		for k, v := range cc.labels {
			key := k + "=" + v
			groups[key] = append(groups[key], member{cc.name, cc.file, cc.typ.Name})
		}
	}
	var ps config.Problems
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		ms := groups[key]
		slices.SortFunc(ms, func(a, b member) int {
			if a.name < b.name {
				return -1
			}
			return 1
		})
		for _, m := range ms[1:] {
			if f0, f := familyOf(ms[0].typ), familyOf(m.typ); f0 != f {
				ps = append(ps, config.Problem{File: m.file, Key: "proxy.labels", Msg: fmt.Sprintf(
					"label %s puts connection %s (%s: %s) in one set with %s (%s: %s); a set's members must share protocol and kind, so connectionSelector: %s could never serve a volume. Use a different label value for one of them",
					key, m.name, m.typ, f, ms[0].name, ms[0].typ, f0, key)})
				break
			}
		}
	}
	return ps
}
