package main

import (
	"bytes"
	"strings"
	"testing"
)

// cluster check --tier decides as lab/testtier.Need does: runs, skips
// with the reason, or fails when LAB_REQUIRE names the tier that cannot run.
func TestCheckTiers(t *testing.T) {
	yes := func() (bool, string) { return true, "" }
	noVM := func() (bool, string) { return false, "no QEMU (package qemu-system-x86)" }
	needs := []tierNeed{{"cluster", yes}, {"vm", noVM}}
	for _, tc := range []struct {
		require  string
		tier     bool
		needs    []tierNeed
		rc       int
		out, err string
	}{
		{"", true, needs[:1], checkRuns, "cluster: available", ""},
		{"", true, needs, checkSkip, `tier "vm" skipped: no QEMU (package qemu-system-x86)`, ""},
		{"cluster", true, needs, checkSkip, `tier "vm" skipped: no QEMU`, ""},
		{"vm,cluster", true, needs, checkFail, "", `tier "vm" is required (LAB_REQUIRE=vm,cluster) but cannot run: no QEMU`},
		{"all", true, needs, checkFail, "", `tier "vm" is required (LAB_REQUIRE=all)`},
		{"", false, needs, checkFail, "", "cluster: not available (vm): no QEMU"},
	} {
		t.Setenv("LAB_REQUIRE", tc.require)
		var out, errb bytes.Buffer
		rc := checkTiers(tc.tier, tc.needs, &out, &errb)
		if rc != tc.rc || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("LAB_REQUIRE=%q tier=%v: rc %d, stdout %q, stderr %q; want rc %d, stdout with %q, stderr with %q",
				tc.require, tc.tier, rc, out.String(), errb.String(), tc.rc, tc.out, tc.err)
		}
		if tc.rc != checkSkip && tc.rc != checkRuns && out.Len() != 0 {
			t.Errorf("LAB_REQUIRE=%q: a failure printed %q on stdout", tc.require, out.String())
		}
	}
}
