package kernel

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/kernel/kerneltest"
)

var errFake = errors.New("injected failure")

// reconciler returns a Reconciler on the host (several share one host,
// as simulators in separate processes share one kernel).
func reconciler(h *kerneltest.Host, smbUsers map[string]string) *Reconciler {
	return New(Options{ConfigFS: h.ConfigFS, SysFS: h.SysFS, MountInfo: h.MountInfo, StateDir: h.StateDir,
		ExportsDir: h.ExportsDir, NFSD: h.NFSD, SMBAddr: h.SMBAddr, SMBUsers: smbUsers, FS: h.FS, Exec: h.Exec})
}

// apply applies and fails the test on error.
func apply(t *testing.T, r *Reconciler, owner string, s State) {
	t.Helper()
	if err := r.Apply(owner, s); err != nil {
		t.Fatalf("Apply(%s): %v", owner, err)
	}
}

// has checks that every want line is in the tree and no notWant line is.
func hasLines(t *testing.T, what string, got, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: missing %q\nhave:\n  %s", what, w, strings.Join(got, "\n  "))
		}
	}
	for _, w := range notWant {
		if slices.Contains(got, w) {
			t.Errorf("%s: unexpected %q", what, w)
		}
	}
}

// withPrefix returns the lines starting with prefix.
func withPrefix(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
