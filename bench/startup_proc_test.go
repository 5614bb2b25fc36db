package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/switchyard-csi/switchyard/lab/csiclient"
)

// BenchmarkStartupProcess is issue 16's start-up row: the proxy with n
// local-hostpath connection files, from exec to the first successful Probe,
// and the idle RSS a second later. Unlike switchyard-lab bench (whose
// client backs off between dial attempts, up to 50 ms, so its figure is
// partly the client's wait), the socket is polled every 250 µs and Probe
// is sent on the first connection that succeeds. Goal ≤ 20 ms and ≤ 20 MB,
// with 1,000 files too.
func BenchmarkStartupProcess(b *testing.B) {
	skipUnlessLinux(b)
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("connections=%d", n), func(b *testing.B) {
			var probe, ready, cpu []time.Duration
			var rss int64
			for range max(b.N, 3) {
				s := startupOnce(b, n)
				probe, ready, cpu, rss = append(probe, s.probe), append(ready, s.socket), append(cpu, s.cpu), s.rss
			}
			b.ReportMetric(ms(pct(probe, .5)), "first-probe-ms")
			b.ReportMetric(ms(pct(ready, .5)), "socket-ms")
			b.ReportMetric(ms(pct(cpu, .5)), "process-cpu-ms")
			b.ReportMetric(float64(rss)/(1<<20), "idle-rss-MiB")
		})
	}
}

// startup is one start's figures: the time to the first accepted
// connection and to the first Probe answer, the idle RSS a second later,
// and the CPU the process used in its whole life (start, the Probe, a
// second idle, the shutdown), from its rusage: exact, where /proc's
// 10 ms ticks are as long as the start itself.
type startup struct {
	probe, socket, cpu time.Duration
	rss                int64
}

// startupOnce starts the proxy over n connection files and measures it.
func startupOnce(b *testing.B, n int) (s startup) {
	b.Helper()
	dir := b.TempDir()
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		base := filepath.Join(dir, "data", strconv.Itoa(i))
		cfg := fmt.Sprintf("driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: %[1]s\n  controllerBasePath: %[1]s\n", base)
		if err := os.WriteFile(filepath.Join(conns, fmt.Sprintf("conn-%04d.yaml", i)), []byte(cfg), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	mainFile := filepath.Join(dir, "main.yaml")
	if err := os.WriteFile(mainFile, []byte("driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(dir, "csi.sock")
	cmd := exec.Command(driverBinary(b), "--driver-config-file="+mainFile, "--csi-name=org.switchyard.bench",
		"--csi-mode=controller", "--csi-mode=node", "--server-socket="+sock, "--node-state-dir="+filepath.Join(dir, "state"), "--log-level=warn")
	cmd.Env = append(os.Environ(), "CSI_NODE_ID=bench-node")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	}()
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			b.Fatalf("no socket after 10 s: %v", err)
		}
		time.Sleep(250 * time.Microsecond)
	}
	s.socket = time.Since(start)
	c, err := csiclient.Dial("unix://" + sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		r, err := c.Identity.Probe(ctx, &csipb.ProbeRequest{})
		if err == nil && r.GetReady().GetValue() {
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("no ready Probe: %v", err)
		}
		time.Sleep(250 * time.Microsecond)
	}
	s.probe = time.Since(start)
	time.Sleep(time.Second)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			s.rss = kb << 10
		}
	}
	stopped = true
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return s
}
