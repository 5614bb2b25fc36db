package suites

// The block shares the health specs take away, as an administrator would
// on the storage host, with the host's own targetcli and nvmetcli over SSH
// (the simulator's, which model targetcli-fb 2.1.53 and nvmetcli; in the
// storage VM they also apply to its kernel). The objects are found by the
// asset name the driver stored on the zvol (democratic-csi:*_assets_name)
// in the host's listing, not by rebuilding the driver's naming here: the
// spec then removes what is there, and a target the driver never made
// fails it before anything is removed.

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// removeISCSITarget deletes the zvol's iSCSI target (`targetcli /iscsi
// delete <iqn>`); its backstore stays, which DeleteVolume must remove.
func removeISCSITarget(ctx context.Context, ds string) shareRemoval {
	GinkgoHelper()
	asset := assetName(ctx, ds, "democratic-csi:iscsi_assets_name")
	iqn := listedName(ctx, "targetcli ls /iscsi 1", "/iscsi", asset)
	out := zfsRun(ctx, "targetcli /iscsi delete "+iqn)
	Expect(out).To(ContainSubstring("Deleted Target "+iqn+"."), "targetcli deleted the target")
	Expect(configshellPaths(zfsRun(ctx, "targetcli ls /iscsi 1"), "/iscsi")).NotTo(HaveKey("/iscsi/"+iqn), "the target is gone on the storage host")
	backstore := "/backstores/block/" + asset
	Expect(configshellPaths(zfsRun(ctx, "targetcli ls /backstores/block 1"), "/backstores/block")).To(HaveKey(backstore), "the backstore stays")
	return shareRemoval{
		mentions: []string{"iSCSI target " + iqn, "is gone"},
		leftovers: func(ctx context.Context) []string {
			if configshellPaths(zfsRun(ctx, "targetcli ls /backstores/block 1"), "/backstores/block")[backstore] {
				return []string{backstore}
			}
			return nil
		},
	}
}

// removeNVMeoFSubsystem deletes the zvol's NVMe-oF subsystem (`nvmetcli
// /subsystems delete <nqn>`), after its port links, as nvmetcli's own
// clear takes ports down before subsystems.
func removeNVMeoFSubsystem(ctx context.Context, ds string) shareRemoval {
	GinkgoHelper()
	asset := assetName(ctx, ds, "democratic-csi:nvmeof_assets_name")
	nqn := listedName(ctx, "nvmetcli ls /subsystems 1", "/subsystems", asset)
	links := portLinks(ctx, nqn)
	Expect(links).NotTo(BeEmpty(), "the subsystem "+nqn+" is linked to a port")
	for _, l := range links {
		zfsRun(ctx, "nvmetcli "+path.Dir(l)+" delete "+nqn)
	}
	zfsRun(ctx, "nvmetcli /subsystems delete "+nqn)
	Expect(configshellPaths(zfsRun(ctx, "nvmetcli ls /subsystems 1"), "/subsystems")).NotTo(HaveKey("/subsystems/"+nqn), "the subsystem is gone on the storage host")
	Expect(portLinks(ctx, nqn)).To(BeEmpty(), "no port links the subsystem")
	return shareRemoval{mentions: []string{"NVMe-oF subsystem " + nqn, "is gone"}}
}

// portLinks are the paths of nqn's links under the host's ports.
func portLinks(ctx context.Context, nqn string) []string {
	GinkgoHelper()
	var links []string
	for _, p := range slices.Sorted(maps.Keys(configshellPaths(zfsRun(ctx, "nvmetcli ls /ports 3"), "/ports"))) {
		if strings.HasSuffix(p, "/subsystems/"+nqn) {
			links = append(links, p)
		}
	}
	return links
}

// assetName is the asset name the driver stored on the zvol, in the case
// its targets use (the driver lowercases it).
func assetName(ctx context.Context, ds, prop string) string {
	GinkgoHelper()
	v := zfsRun(ctx, "zfs get -H -o value "+prop+" "+ds)
	Expect(v).NotTo(Or(BeEmpty(), Equal("-")), "the driver stored %s on %s", prop, ds)
	return strings.ToLower(v)
}

// listedName is the one object directly under root in the listing that
// ls prints whose name ends in ":<asset>" (<basename>:<asset>).
func listedName(ctx context.Context, ls, root, asset string) string {
	GinkgoHelper()
	out := zfsRun(ctx, ls)
	var found []string
	for p := range configshellPaths(out, root) {
		if path.Dir(p) == root && strings.HasSuffix(p, ":"+asset) {
			found = append(found, path.Base(p))
		}
	}
	Expect(found).To(HaveLen(1), "one object named …:%s under %s on the storage host; `%s` printed:\n%s", asset, root, ls, out)
	return found[0]
}

// configshellPaths reads a configshell `ls` tree (targetcli, nvmetcli)
// into the paths it lists: each "o- <name> ...." line is a node, two
// columns deeper than its parent; the first line is root itself.
func configshellPaths(out, root string) map[string]bool {
	paths := map[string]bool{}
	var stack []string
	for _, line := range strings.Split(out, "\n") {
		i := strings.Index(line, "o- ")
		if i < 0 || i%2 != 0 {
			continue
		}
		name := strings.Fields(line[i+3:])
		if len(name) == 0 || i/2 > len(stack) {
			continue
		}
		stack = append(stack[:i/2], name[0])
		paths[path.Join(append([]string{path.Dir(root)}, stack...)...)] = true
	}
	return paths
}
