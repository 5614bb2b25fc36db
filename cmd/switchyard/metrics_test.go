package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// runMainEnv makes the test binary run the driver's main instead of the
// tests, so the end-to-end test starts the real program as its own process
// without a separate go build.
const runMainEnv = "SWITCHYARD_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// metricsRig is a proxy config over local-hostpath (no root needed) with
// one working and one broken connection file.
func metricsRig(t *testing.T) (dir, mainFile, broken string) {
	t.Helper()
	dir = t.TempDir()
	conns := filepath.Join(dir, "connections")
	if err := os.MkdirAll(conns, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	write(filepath.Join(conns, "hostpath-a.yaml"), "driver: local-hostpath\nlocal-hostpath:\n  shareBasePath: "+data+"\n  controllerBasePath: "+data+"\n")
	broken = filepath.Join(conns, "broken.yaml")
	write(broken, "driver: [\n")
	mainFile = filepath.Join(dir, "main.yaml")
	write(mainFile, "driver: proxy\nproxy:\n  configFolder: "+conns+"\n  nodeTopology:\n    type: node\n")
	return dir, mainFile, broken
}

var servingMetrics = regexp.MustCompile(`msg="serving metrics" address=(\S+)`)

// The driver started with --metrics-address on a free port serves
// /metrics; after a few CSI calls the scrape shows them per connection and
// method, the broken connection file by name, and the process and Go
// collectors. SIGTERM stops the endpoint with the driver.
func TestMetricsEndToEnd(t *testing.T) {
	dir, mainFile, broken := metricsRig(t)
	sock := filepath.Join(dir, "csi.sock")
	cmd := exec.Command(os.Args[0], "--driver-config-file="+mainFile, "--csi-name=metrics.test.csi", "--csi-mode=controller",
		"--server-socket="+sock, "--metrics-address=127.0.0.1:0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "CSI_NODE_ID=node-1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var logs bytes.Buffer
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logs.WriteString(line + "\n")
			if m := servingMetrics.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	var metricsAddr string
	select {
	case metricsAddr = <-addr:
	case err := <-exited:
		t.Fatalf("the driver exited before serving metrics: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no %q line in 30 s", "serving metrics")
	}

	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitServing(ctx, t, cc)
	ctl := csipb.NewControllerClient(cc)
	mountCap := []*csipb.VolumeCapability{{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}}
	create := func(conn string) (*csipb.CreateVolumeResponse, error) {
		return ctl.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-e2e", Parameters: map[string]string{"connection": conn},
			VolumeCapabilities: mountCap, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1 << 20}})
	}
	v, err := create("hostpath-a")
	if err != nil {
		t.Fatalf("CreateVolume: %v", err)
	}
	if _, err := ctl.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: v.GetVolume().GetVolumeId(), VolumeCapabilities: mountCap}); err != nil {
		t.Fatalf("ValidateVolumeCapabilities: %v", err)
	}
	if _, err := ctl.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: v.GetVolume().GetVolumeId()}); err != nil {
		t.Fatalf("DeleteVolume: %v", err)
	}
	if _, err := create("broken"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("CreateVolume on the broken file: %v, want FAILED_PRECONDITION", err)
	}
	if _, err := ctl.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "v:no-such/x", VolumeCapabilities: mountCap}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a handle of a connection without file: %v", err)
	}

	body := scrape(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{
		`switchyard_csi_calls_total{connection="hostpath-a",method="CreateVolume"} 1`,
		`switchyard_csi_calls_total{connection="hostpath-a",method="DeleteVolume"} 1`,
		`switchyard_csi_calls_total{connection="hostpath-a",method="ValidateVolumeCapabilities"} 1`,
		`switchyard_csi_call_errors_total{code="FailedPrecondition",connection="broken",method="CreateVolume"} 1`,
		`switchyard_csi_call_errors_total{code="FailedPrecondition",connection="_unknown",method="ValidateVolumeCapabilities"} 1`,
		`switchyard_csi_call_duration_seconds_bucket{connection="hostpath-a",method="CreateVolume",le="60"} 1`,
		`switchyard_csi_call_duration_seconds_count{connection="_none",method="Probe"}`,
		fmt.Sprintf(`switchyard_connection_config_error{connection="broken",file=%q} 1`, broken),
		`switchyard_connection_loaded{connection="hostpath-a"} 1`,
		`switchyard_connection_loaded{connection="broken"} 0`,
		`switchyard_connection_reloads_total{connection="hostpath-a"} 1`,
		`switchyard_connection_last_reload_timestamp_seconds{connection="hostpath-a"}`,
		"process_cpu_seconds_total",
		"process_resident_memory_bytes",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	for _, never := range []string{"pvc-e2e", "no-such", "node-1"} {
		if strings.Contains(body, never) {
			t.Errorf("the scrape carries request data %q as a label", never)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the driver exited with %v after SIGTERM\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the driver did not stop in 30 s after SIGTERM")
	}
	if _, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil { //nolint:noctx,bodyclose // expected to fail
		t.Fatal("the metrics endpoint still answers after the driver stopped")
	}
}

func waitServing(ctx context.Context, t *testing.T, cc *grpc.ClientConn) {
	t.Helper()
	id := csipb.NewIdentityClient(cc)
	for {
		if _, err := id.Probe(ctx, &csipb.ProbeRequest{}); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the CSI socket never answered Probe")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test against a local endpoint
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s %v", resp.Status, err)
	}
	return string(b)
}

// A --metrics-address that cannot be listened on stops the driver at start
// with a message naming the flag; without the flag nothing listens.
func TestMetricsAddressErrors(t *testing.T) {
	_, mainFile, _ := metricsRig(t)
	var out, errOut bytes.Buffer
	code := run([]string{"--driver-config-file=" + mainFile, "--csi-name=x", "--csi-mode=controller",
		"--server-socket=" + filepath.Join(t.TempDir(), "s.sock"), "--metrics-address=256.0.0.1:1"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "--metrics-address 256.0.0.1:1") {
		t.Fatalf("exit %d, stderr %q; want 1 naming --metrics-address", code, errOut.String())
	}
}
