package backends

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// startSim runs `switchyard-lab <args> --listen 127.0.0.1:<free port>
// --state <tmp>` until the test ends and returns the address once it
// accepts connections. The checks are tested against the simulators
// they will ask in the cluster, not against a fake of them.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	bin := driverbin.Lab(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, append(args, "--listen", addr, "--state", t.TempDir())...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not listen on %s: %v\n%s", args, addr, err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestZFSLeftoversAskTheSimulator(t *testing.T) {
	addr := startSim(t, "zfs-ssh", "--password", "pw", "--nvmet-port", "")
	ctx := context.Background()
	for _, c := range []string{"zfs create -p tank/k8s/c1/pvc-1", "zfs snapshot tank/k8s/c1/pvc-1@snap-1", "zfs create -p tank/k8s/c1-snapshots/x"} {
		if out, err := SSHRun(ctx, addr, "root", "pw", c); err != nil {
			t.Fatalf("%s: %v %s", c, err, out)
		}
	}
	left, err := zfsLeftovers(ctx, addr, "root", "pw", "tank", "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"tank/k8s/c1/pvc-1", "tank/k8s/c1/pvc-1@snap-1", "tank/k8s/c1-snapshots/x"}
	if !reflect.DeepEqual(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if out, err := SSHRun(ctx, addr, "root", "pw", "zfs set refquota=2147483648 tank/k8s/c1/pvc-1"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if n, err := zfsSize(ctx, addr, "root", "pw", "tank/k8s/c1/pvc-1", "refquota"); err != nil || n != 2<<30 {
		t.Errorf("refquota: %d %v, want 2 GiB", n, err)
	}
	if left, err := zfsLeftovers(ctx, addr, "root", "pw", "tank", "c2"); err != nil || len(left) != 0 {
		t.Errorf("a connection with no datasets: %v %v, want nothing", left, err)
	}
	if _, err := zfsLeftovers(ctx, addr, "root", "wrong", "tank", "c1"); err == nil {
		t.Error("a wrong password was not an error: the check must never report 'nothing left' when it could not look")
	}
}

func TestTrueNASLeftoversAskTheSimulator(t *testing.T) {
	addr := startSim(t, "truenas", "--version", "25.10", "--password", "pw")
	base := "http://" + addr
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("root:pw"))
	for _, ds := range []string{"tank/k8s", "tank/k8s/c1", "tank/k8s/c1/pvc-1", "tank/k8s/c10"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v2.0/pool/dataset", bytes.NewBufferString(`{"name": "`+ds+`"}`))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("creating %s: HTTP %d", ds, resp.StatusCode)
		}
	}
	h := &TrueNASHost{URL: base, User: "root", Password: "pw"}
	left, err := truenasLeftovers(context.Background(), base, h, "tank", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(left, []string{"tank/k8s/c1/pvc-1"}) {
		t.Errorf("left %v, want only tank/k8s/c1/pvc-1 (not the parent, not c10)", left)
	}
	if _, err := truenasLeftovers(context.Background(), base, &TrueNASHost{User: "root", Password: "wrong"}, "tank", "c1"); err == nil {
		t.Error("a wrong password was not an error")
	}
}

func TestInfiniaLeftoversAskTheSimulator(t *testing.T) {
	addr := startSim(t, "infinia", "--plain")
	h := &InfiniaHost{URL: "http://" + addr, Account: "clu1/red/csiAccount", Password: "switchyard-lab", Service: "red/csiService"}
	left, err := infiniaLeftovers(context.Background(), h, []string{"clu1/red/csiAccount:red/csiService/pvc-1"})
	if err != nil || len(left) != 0 {
		t.Fatalf("an empty service: %v %v", left, err)
	}
	bad := *h
	bad.Password = "wrong"
	if _, err := infiniaLeftovers(context.Background(), &bad, nil); err == nil {
		t.Error("a wrong password was not an error")
	}
}
