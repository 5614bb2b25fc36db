// Package testtier lets a test declare which test tier it belongs to and skip,
// with its reason, when this machine cannot run that tier. LAB_REQUIRE
// (comma-separated tier names, or "all") turns such a skip into a failure,
// so CI never skips silently what its machine can run.
package testtier

import (
	"os"
	"strings"
	"testing"
)

// Tier names, as LAB_REQUIRE takes them (docs/quickstart.md).
const (
	Unit      = "unit"
	Sanity    = "sanity" // needs root for real mounts
	VM        = "vm"
	Container = "container"
	// ContainerTargets: the nvmet/LIO target containers, apart from Container
	// because they need a kernel with configfs and the target modules, which a
	// machine can lack while its Docker runs everything else (the lab machines).
	ContainerTargets = "container-targets"
	Cluster          = "cluster"
	Fidelity         = "fidelity" // the ZFS model against real zfs: needs root and zfs-fuse (scripts/ensure-zfs-fuse.sh)
	Chart            = "chart"    // helm lint and template of deploy/charts: needs helm (scripts/ensure-helm.sh, run by make deps)
)

// Required reports whether LAB_REQUIRE names tier.
func Required(name string) bool {
	for _, t := range strings.Split(os.Getenv("LAB_REQUIRE"), ",") {
		t = strings.TrimSpace(t)
		if t == name || t == "all" {
			return true
		}
	}
	return false
}

// Need skips t (or fails it, when the tier is required) unless ok.
func Need(t testing.TB, name string, ok bool, reason string) {
	t.Helper()
	if ok {
		return
	}
	if Required(name) {
		t.Fatalf("tier %q is required (LAB_REQUIRE=%s) but cannot run: %s", name, os.Getenv("LAB_REQUIRE"), reason)
	}
	t.Skipf("tier %q skipped: %s", name, reason)
}

// NeedRoot is Need for tests that mount: they run only as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	Need(t, Sanity, os.Geteuid() == 0, "real mounts need root (euid is not 0)")
}
