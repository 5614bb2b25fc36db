package testtier

import (
	"fmt"
	"regexp"
	"runtime"
	"testing"
)

// recorder stands in for a test: it records whether Need skipped or failed it.
type recorder struct {
	testing.TB
	skipped, failed string
}

// Skipf and Fatalf end the goroutine, as testing's do.
func (r *recorder) Helper()                   {}
func (r *recorder) Skipf(f string, a ...any)  { r.skipped = fmt.Sprintf(f, a...); runtime.Goexit() }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = fmt.Sprintf(f, a...); runtime.Goexit() }

// needs runs Need in a goroutine of its own and reports whether it returned.
func (r *recorder) needs(name string, ok bool) bool {
	done := make(chan struct{})
	go func() { defer close(done); Need(r, name, ok, "why") }()
	<-done
	return r.skipped == "" && r.failed == ""
}

// TestContainerTargetsApart: requiring the container tier does not require
// the target containers (a machine without the kernel modules runs Docker
// fine), naming container-targets does, and "all" covers both.
func TestContainerTargetsApart(t *testing.T) {
	for _, c := range []struct {
		require           string
		container, target bool
	}{
		{"", false, false},
		{"container", true, false},
		{"container,container-targets", true, true},
		{" container-targets ", false, true},
		{"all", true, true},
	} {
		t.Setenv("LAB_REQUIRE", c.require)
		if got := Required(Container); got != c.container {
			t.Errorf("LAB_REQUIRE=%q: Required(Container) = %v", c.require, got)
		}
		if got := Required(ContainerTargets); got != c.target {
			t.Errorf("LAB_REQUIRE=%q: Required(ContainerTargets) = %v", c.require, got)
		}
		r := &recorder{}
		if r.needs(ContainerTargets, false); (r.failed != "") != c.target || (r.skipped != "") == c.target {
			t.Errorf("LAB_REQUIRE=%q: Need(ContainerTargets, false) skipped=%q failed=%q", c.require, r.skipped, r.failed)
		}
	}
}

// TestNeedPasses: a tier that can run neither skips nor fails.
func TestNeedPasses(t *testing.T) {
	t.Setenv("LAB_REQUIRE", "all")
	if r := (&recorder{}); !r.needs(ContainerTargets, true) {
		t.Errorf("Need(ok) skipped=%q failed=%q", r.skipped, r.failed)
	}
}

// TestTierNames: every tier has its own name, spelt as LAB_REQUIRE takes it
// (comma-separated, so no commas or spaces).
func TestTierNames(t *testing.T) {
	re := regexp.MustCompile(`^[a-z][a-z-]*$`)
	seen := map[string]bool{}
	for _, n := range []string{Unit, Sanity, VM, Container, ContainerTargets, Cluster, Fidelity, Chart} {
		if !re.MatchString(n) || n == "all" {
			t.Errorf("tier name %q cannot be named in LAB_REQUIRE", n)
		}
		if seen[n] {
			t.Errorf("two tiers are named %q", n)
		}
		seen[n] = true
	}
}
