package sanity

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/lab/vm"
)

// TestSanityInVM is the vm tier of csi-sanity: it builds this package's
// tests as a static binary, boots the storage VM and runs them there with
// SANITY_KERNEL=1, so the simulators' targets and shares are real and
// csi-sanity's Node Service specs stage, publish and expand volumes with
// nvme-cli, open-iscsi, the NFS client and cifs. The VM's report goes to
// $SANITY_VM_REPORT when set.
func TestSanityInVM(t *testing.T) {
	if kernelMode() {
		t.Skip("already inside the VM")
	}
	ok, reason := vm.Available()
	if ok && testing.Short() {
		ok, reason = false, "-short"
	}
	testtier.Need(t, testtier.VM, ok, reason)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	start := time.Now()
	var log strings.Builder
	img, err := vm.EnsureImage(ctx, vm.ImageOptions{Log: &log})
	if err != nil {
		t.Fatalf("VM image: %v\n%s", err, log.String())
	}
	t.Logf("image ready in %.1f s (built now: %v)", time.Since(start).Seconds(), img.Built)
	share := t.TempDir()
	bin := filepath.Join(share, "sanity.test")
	if err := vm.BuildTestBinary(ctx, "github.com/switchyard-csi/switchyard/sanity", bin); err != nil {
		t.Fatal(err)
	}
	report := "/lab/sanity-report.txt"
	// SANITY_VM_RUN narrows the run while working on one backend.
	// TestShareClientsOnKernel proves nfs-client, smb-client and
	// node-manual against the VM's nfsd, Samba, LIO and nvmet (84 s in the
	// VM on 2026-11-26): their csi-sanity targets stand a local directory
	// in for the share, so only this test mounts them for real.
	run, want := os.Getenv("SANITY_VM_RUN"), []string{"TestSanity", "TestDataSurvivesRestage", "TestShareClientsOnKernel"}
	if run == "" {
		run = "^(TestSanity|TestDataSurvivesRestage|TestShareClientsOnKernel)$"
	} else {
		want = nil
	}
	env := []string{kernelEnv + "=1", "LAB_REQUIRE=sanity,vm", "SANITY_REPORT=" + report}
	args := []string{"-test.run", run, "-test.timeout", "35m"}
	if f := os.Getenv("SANITY_VM_FOCUS"); f != "" { // a csi-sanity configuration or spec regexp
		args = append(args, "-ginkgo.focus", f, "-ginkgo.no-color")
	}
	tests := []vm.GoTest{{Name: "sanity", Binary: bin, Args: args, Env: env}}
	// SANITY_VM_BENCH=1 (make bench) adds BenchmarkStagePublish to the boot.
	if os.Getenv("SANITY_VM_BENCH") != "" {
		tests = append(tests, vm.GoTest{Name: "bench", Binary: bin,
			Args: []string{"-test.run", "^$", "-test.bench", "BenchmarkStagePublish", "-test.benchtime", "5x"}, Env: env})
	}
	results, res, err := vm.RunGoTests(ctx, img, vm.RunOptions{Share: share, Udev: true, MemoryMB: 3072, Timeout: 40 * time.Minute}, tests...)
	if res != nil {
		t.Logf("VM: boot %.1f s, wall %.1f s, run.sh exit %d", res.BootSeconds, res.Wall.Seconds(), res.ExitCode)
	}
	if err != nil {
		console := ""
		if res != nil {
			console = res.Console
		}
		t.Fatalf("running csi-sanity in the VM: %v\n%s", err, lastLines(console, 60))
	}
	if data, err := os.ReadFile(filepath.Join(share, "sanity-report.txt")); err == nil {
		t.Logf("csi-sanity in the VM:\n%s", data)
		if times, err := os.ReadFile(filepath.Join(share, "sanity-report.txt.times")); err == nil {
			t.Logf("seconds per configuration in the VM:\n%s", times)
		}
		if out := os.Getenv("SANITY_VM_REPORT"); out != "" {
			_ = os.WriteFile(out, data, 0o644)
			if skips, err := os.ReadFile(filepath.Join(share, "sanity-report.txt.skips")); err == nil {
				_ = os.WriteFile(out+".skips", skips, 0o644)
			}
		}
	}
	for _, r := range results {
		for _, l := range strings.Split(r.Output, "\n") {
			if strings.Contains(l, "ns/op") {
				t.Logf("in the VM: %s", strings.TrimSpace(l))
			}
		}
	}
	ran := map[string]bool{}
	for _, r := range results {
		switch r.Action {
		case vm.Fail:
			t.Errorf("in the VM: %s failed:\n%s", r.Test, lastLines(r.Output, 80))
			if os.Getenv("SANITY_VM_FULL") != "" {
				t.Logf("full output of %s:\n%s", r.Test, r.Output)
			}
		case vm.Pass:
			ran[r.Test] = true
		}
		if r.Test != "" && strings.Count(r.Test, "/") <= 2 {
			t.Logf("in the VM: %s", r.String())
		}
	}
	for _, w := range want {
		if !ran[w] && !t.Failed() {
			t.Errorf("%s did not pass in the VM", w)
		}
	}
	t.Logf("vm tier of csi-sanity: %.1f s", time.Since(start).Seconds())
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
