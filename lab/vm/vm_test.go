package vm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/lab/testtier"
)

// The VM tier: these tests boot the real VM. One image and one probe
// binary serve them all.
var (
	imgOnce  sync.Once
	imgErr   error
	testImg  *Image
	binOnce  sync.Once
	binErr   error
	probeBin string
	binDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// needVM skips (or, with LAB_REQUIRE=vm, fails) where the VM cannot run,
// and returns the cached image, building it on first use.
func needVM(t testing.TB) *Image {
	t.Helper()
	ok, reason := Available()
	testtier.Need(t, testtier.VM, ok, reason)
	imgOnce.Do(func() {
		var log bytes.Buffer
		start := time.Now()
		testImg, imgErr = EnsureImage(context.Background(), ImageOptions{Log: &log})
		if imgErr != nil {
			imgErr = fmt.Errorf("%w\nbuild log ends with:\n%s", imgErr, lastLines(log.String(), 30))
			return
		}
		how := "reused"
		if testImg.Built {
			how = "built"
		}
		t.Logf("image %s %s in %s (%d MiB on disk)", testImg.Dir, how, time.Since(start).Round(10*time.Millisecond), testImg.DiskUsage()>>20)
	})
	if imgErr != nil {
		t.Fatal(imgErr)
	}
	return testImg
}

// probeBinary builds lab/vm/internal/vmprobe once, statically.
func probeBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "vmprobe-"); binErr != nil {
			return
		}
		start := time.Now()
		probeBin = filepath.Join(binDir, "vmprobe.test")
		binErr = BuildTestBinary(context.Background(), "github.com/switchyard-csi/switchyard/lab/vm/internal/vmprobe", probeBin)
		t.Logf("built the probe binary in %s", time.Since(start).Round(10*time.Millisecond))
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return probeBin
}

// TestVMProbe runs the probe inside the VM (with udev) and checks every
// kernel target and initiator test came back passed, and that a second
// binary's pass, fail and skip come back as such from the same boot.
func TestVMProbe(t *testing.T) {
	img := needVM(t)
	bin := probeBinary(t)
	var console bytes.Buffer
	results, res, err := RunGoTests(context.Background(), img, RunOptions{Udev: true, Console: &console, Timeout: 8 * time.Minute},
		GoTest{Name: "vmprobe", Binary: bin, Args: []string{"-test.timeout=6m"},
			Env: []string{"SWITCHYARD_VM_PROBE=1", "SWITCHYARD_VM_PROBE_UDEV=1"}},
		GoTest{Name: "outcomes", Binary: bin, Args: []string{"-test.run=^TestOutcomes$"},
			Env: []string{"SWITCHYARD_VM_PROBE_OUTCOMES=1"}},
	)
	if err != nil {
		t.Fatalf("%v\nconsole:\n%s", err, lastLines(console.String(), 40))
	}
	t.Logf("boot %.1f s to base-ready, whole VM %s", res.BootSeconds, res.Wall.Round(100*time.Millisecond))
	want := map[string]Action{
		"vmprobe TestConfigfsMounted": Pass,
		"vmprobe TestModprobeNVMe":    Pass,
		"vmprobe TestNVMeTCP":         Pass,
		"vmprobe TestNVMeTCP/by-id":   Pass,
		"vmprobe TestNVMeTCP/ext4":    Pass,
		"vmprobe TestISCSI":           Pass,
		"vmprobe TestISCSI/by-path":   Pass,
		"vmprobe TestISCSI/ext4":      Pass,
		"vmprobe TestNFS":             Pass,
		"vmprobe TestSMB":             Pass,
		"vmprobe TestOutcomes":        Skip,
		"vmprobe TestServeOnce":       Skip,
		"outcomes TestOutcomes":       Fail,
		"outcomes TestOutcomes/pass":  Pass,
		"outcomes TestOutcomes/fail":  Fail,
		"outcomes TestOutcomes/skip":  Skip,
	}
	got := map[string]TestResult{}
	for _, r := range results {
		if testing.Verbose() && r.Binary == "vmprobe" && !strings.Contains(r.Test, "/") {
			t.Logf("%s\n%s", r, strings.TrimRight(r.Output, "\n")) // with the probe's timings
		} else {
			t.Log(r)
		}
		got[r.Binary+" "+r.Test] = r
	}
	for name, action := range want {
		r, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: no result", name)
		case r.Action != action:
			t.Errorf("%s: %s, want %s; output:\n%s", name, r.Action, action, r.Output)
		}
	}
	for name, r := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected result %s: %s\n%s", name, r.Action, r.Output)
		}
	}
	if t.Failed() {
		t.Logf("console:\n%s", lastLines(console.String(), 60))
	}
}

// TestRunExitCodeShareAndForward checks run.sh's exit code, files written
// to the share, the boot time, and a forwarded port reaching a server in
// the VM.
func TestRunExitCodeShareAndForward(t *testing.T) {
	img := needVM(t)
	bin := probeBinary(t)
	share := t.TempDir()
	if err := copyFile(bin, filepath.Join(share, "vmprobe.test"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		"SWITCHYARD_VM_PROBE_SERVE=7777 /lab/vmprobe.test -test.run '^TestServeOnce$' -test.v >/lab/serve.log 2>&1\n" +
		"echo \"served rc=$?\" >/lab/served.txt\n" +
		"exit 7\n"
	if err := os.WriteFile(filepath.Join(share, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greeting := make(chan string, 1)
	go func() { greeting <- dialUntilGreeted(ctx, fmt.Sprintf("127.0.0.1:%d", port)) }()

	res, err := img.Run(ctx, RunOptions{Share: share, Forward: []PortForward{{HostPort: port, GuestPort: 7777}}, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if res.ExitCode != 7 {
		t.Errorf("ExitCode = %d, want 7 (run.sh's exit)", res.ExitCode)
	}
	if g := <-greeting; g != "hello from lab" {
		t.Errorf("through the forwarded port: %q, want %q", g, "hello from lab")
	}
	if b, err := os.ReadFile(filepath.Join(share, "served.txt")); err != nil || string(b) != "served rc=0\n" {
		b2, _ := os.ReadFile(filepath.Join(share, "serve.log"))
		t.Errorf("served.txt = %q, %v; serve.log:\n%s", b, err, b2)
	}
	if res.BootSeconds <= 0 || res.BootSeconds > res.Wall.Seconds() {
		t.Errorf("BootSeconds %.2f, Wall %s", res.BootSeconds, res.Wall)
	}
	for _, want := range []string{"LAB: net-ready", "LAB: share-mounted", "LAB: run-finished rc=7"} {
		if !strings.Contains(res.Console, want) {
			t.Errorf("console lacks %q:\n%s", want, res.Console)
		}
	}
	t.Logf("boot %.1f s, wall %s", res.BootSeconds, res.Wall.Round(100*time.Millisecond))
}

// dialUntilGreeted connects until the server in the VM answers with a
// line. Before the guest listens QEMU accepts and then closes at once.
func dialUntilGreeted(ctx context.Context, addr string) string {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			// The guest serves once: a greeting still in flight when this
			// deadline passes is lost for good, and under TCG on a loaded
			// host QEMU's user network can take seconds to pass it on.
			c.SetReadDeadline(time.Now().Add(45 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if err == nil {
				return strings.TrimSpace(line)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return ""
}

// TestRunKilled checks that a timeout or a cancelled context kills QEMU
// and says so.
func TestRunKilled(t *testing.T) {
	img := needVM(t)
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration
		want    string
	}{
		{"timeout", 2 * time.Second, 0, "longer than its timeout of 2s"},
		{"context cancelled", 0, 2 * time.Second, "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share := t.TempDir()
			os.WriteFile(filepath.Join(share, "run.sh"), []byte("#!/bin/sh\nsleep 600\n"), 0o755)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			res, err := img.Run(ctx, RunOptions{Share: share, Timeout: tt.timeout})
			if err == nil || !strings.Contains(err.Error(), "qemu killed") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want qemu killed ... %s", err, tt.want)
			}
			if tt.cancel > 0 && !errors.Is(err, context.Canceled) {
				t.Errorf("err does not wrap context.Canceled: %v", err)
			}
			if res == nil || res.ExitCode != -1 || res.Wall > time.Minute {
				t.Errorf("result %+v, want exit code -1 soon after the kill", res)
			}
		})
	}
}

// TestRunPowerOffBeforeTheEnd: a VM that stops before run.sh finishes
// gives exit code -1 and an error.
func TestRunPowerOffBeforeTheEnd(t *testing.T) {
	img := needVM(t)
	share := t.TempDir()
	// The second's pause lets the console drain: a power off at once may
	// drop the line still in the tty's buffer (seen in CI at load).
	os.WriteFile(filepath.Join(share, "run.sh"), []byte("#!/bin/sh\necho going down\nsleep 1\necho o >/proc/sysrq-trigger\nsleep 60\n"), 0o755)
	res, err := img.Run(context.Background(), RunOptions{Share: share, Timeout: 3 * time.Minute})
	if err == nil || !strings.Contains(err.Error(), "run.sh did not finish") {
		t.Fatalf("err = %v, want run.sh did not finish", err)
	}
	if res == nil || res.ExitCode != -1 || !strings.Contains(res.Console, "going down") {
		t.Errorf("result %+v, want exit code -1 and the script's output", res)
	}
}

func TestRunNeedsAShare(t *testing.T) {
	for _, o := range []RunOptions{{}, {Share: filepath.Join(t.TempDir(), "missing")}} {
		if _, err := (&Image{}).Run(context.Background(), o); err == nil || !strings.Contains(strings.ToLower(err.Error()), "share") {
			t.Errorf("Run(%+v) = %v, want an error about the share", o, err)
		}
	}
}

// BenchmarkBoot boots to power-off with an empty run.sh.
func BenchmarkBoot(b *testing.B) {
	img := needVM(b)
	share := b.TempDir()
	os.WriteFile(filepath.Join(share, "run.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	var boot float64
	n := 0
	for b.Loop() {
		res, err := img.Run(context.Background(), RunOptions{Share: share, Timeout: 3 * time.Minute})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
		boot += res.BootSeconds
		n++
	}
	b.ReportMetric(boot/float64(n), "boot-s/op")
}

// TestRunPowersOffPastADeadNetworkMount: a failed test can leave an NFS
// mount whose server has gone, with data still to write. The VM must still
// power off when run.sh ends (it once waited in sync(1) until its 40-minute
// limit), run.sh's exit code must reach the host, and the guest CPU must
// not offer AVX2 (see qemuArgs).
func TestRunPowersOffPastADeadNetworkMount(t *testing.T) {
	img := needVM(t)
	share := t.TempDir()
	script := `#!/bin/sh
grep -qw avx2 /proc/cpuinfo && echo "guest cpu has avx2"
mkdir -p /srv/e /mnt/e
rpcbind
echo '/srv/e 127.0.0.1(rw,no_root_squash,sync,no_subtree_check)' >/etc/exports
mount -t nfsd nfsd /proc/fs/nfsd 2>/dev/null
exportfs -ra && rpc.nfsd 4 && rpc.mountd || exit 3
mount -t nfs -o vers=3,nolock,hard 127.0.0.1:/srv/e /mnt/e || exit 4
dd if=/dev/zero of=/mnt/e/f bs=1M count=8 2>/dev/null &
sleep 1
rpc.nfsd 0
echo "nfs server stopped"
exit 5
`
	if err := os.WriteFile(filepath.Join(share, "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := img.Run(context.Background(), RunOptions{Share: share, Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatalf("%v (a hang here is the sync at power-off waiting on the dead mount)", err)
	}
	if res.ExitCode != 5 || !strings.Contains(res.Console, "nfs server stopped") {
		t.Fatalf("exit code %d, want 5 after the server stopped; console:\n%s", res.ExitCode, lastLines(res.Console, 30))
	}
	if strings.Contains(res.Console, "guest cpu has avx2") {
		t.Errorf("the guest CPU offers AVX2; qemuArgs should take it away")
	}
	t.Logf("boot %.1f s, wall %s", res.BootSeconds, res.Wall.Round(100*time.Millisecond))
}
