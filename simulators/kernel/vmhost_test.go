package kernel

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
	"github.com/switchyard-csi/switchyard/lab/vm"
)

// TestKernelTargetsVM is the vm tier of this package: it boots the storage
// VM and runs TestInVM there, against the VM's real nvmet, LIO, nfsd and
// Samba with the real initiators.
func TestKernelTargetsVM(t *testing.T) {
	ok, reason := vm.Available()
	if ok && testing.Short() {
		ok, reason = false, "-short"
	}
	testtier.Need(t, testtier.VM, ok, reason)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	start := time.Now()
	var log bytes.Buffer
	img, err := vm.EnsureImage(ctx, vm.ImageOptions{Log: &log})
	if err != nil {
		t.Fatalf("VM image: %v\n%s", err, tail(log.String(), 30))
	}
	t.Logf("image ready in %.1f s (built: %v)", time.Since(start).Seconds(), img.Built)

	start = time.Now()
	bin := filepath.Join(t.TempDir(), "kernel.test")
	if err := vm.BuildTestBinary(ctx, "github.com/switchyard-csi/switchyard/simulators/kernel", bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("test binary built in %.1f s", time.Since(start).Seconds())

	start = time.Now()
	results, res, err := vm.RunGoTests(ctx, img, vm.RunOptions{Timeout: 10 * time.Minute},
		vm.GoTest{Name: "kernel", Binary: bin, Args: []string{"-test.run", "^(TestInVM|TestStorageHostRebootInVM)$", "-test.timeout", "8m"}, Env: []string{inVMEnv + "=1"}})
	if res != nil {
		t.Logf("VM: boot %.1f s, wall %.1f s, run.sh exit %d", res.BootSeconds, res.Wall.Seconds(), res.ExitCode)
	}
	if err != nil {
		console := ""
		if res != nil {
			console = tail(res.Console, 40)
		}
		t.Fatalf("running the tests in the VM: %v\n%s", err, console)
	}
	passed := map[string]bool{}
	for _, r := range results {
		t.Log(r.String())
		switch {
		case r.Action == vm.Fail:
			t.Errorf("in the VM: %s failed:\n%s", r.Test, r.Output)
		case (r.Test == "TestInVM" || r.Test == "TestStorageHostRebootInVM") && r.Action == vm.Pass:
			passed[r.Test] = true
			for _, l := range strings.Split(r.Output, "\n") {
				if strings.Contains(l, "STEP ") {
					t.Log(strings.TrimSpace(l))
				}
			}
		}
	}
	for _, want := range []string{"TestInVM", "TestStorageHostRebootInVM"} {
		if !passed[want] && !t.Failed() {
			t.Errorf("%s did not pass in the VM (results: %v)", want, results)
		}
	}
	t.Logf("VM tier of package kernel: %.1f s", time.Since(start).Seconds())
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
