package backends

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// synologyLeftovers against the real DSM simulator: empty on a fresh DSM,
// then every LUN, LUN snapshot, target, share and share snapshot made
// through DSM's API is listed.
func TestSynologyLeftoversAskDSM(t *testing.T) {
	lab := driverbin.Lab(t)
	addr := driverbin.FreeLoopback(t, 33000)
	cmd := exec.Command(lab, "synology", "--plain", "--listen", addr, "--state", t.TempDir(), "--password", "pw")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	h := &SynologyHost{URL: "http://" + addr, User: "admin", Password: "pw"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var left []string
	var err error
	for i := 0; i < 100; i++ {
		if left, err = synologyLeftovers(ctx, h); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || len(left) != 0 {
		t.Fatalf("a fresh DSM: %v %v; want nothing", left, err)
	}
	var login struct {
		SID string `json:"sid"`
	}
	if err := dsmCall(ctx, h.URL, "", map[string]string{"api": "SYNO.API.Auth", "version": "6", "method": "login", "account": "admin", "passwd": "pw", "format": "sid"}, &login); err != nil {
		t.Fatal(err)
	}
	call := func(params map[string]string, out any) {
		t.Helper()
		if err := dsmCall(ctx, h.URL, login.SID, params, out); err != nil {
			t.Fatal(err)
		}
	}
	var lun struct {
		UUID string `json:"uuid"`
	}
	call(map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "create", "name": `"pvc-l1"`, "location": `"/volume1"`, "size": "1048576", "type": `"BLUN"`}, &lun)
	var snap struct {
		UUID string `json:"snapshot_uuid"`
	}
	call(map[string]string{"api": "SYNO.Core.ISCSI.LUN", "version": "1", "method": "take_snapshot", "src_lun_uuid": strconv.Quote(lun.UUID), "snapshot_name": `"s1"`}, &snap)
	call(map[string]string{"api": "SYNO.Core.ISCSI.Target", "version": "1", "method": "create", "name": `"pvc-l1"`, "iqn": `"iqn.2000-01.com.synology:e2e.pvc-l1"`, "auth_type": "0"}, nil)
	call(map[string]string{"api": "SYNO.Core.Share", "version": "1", "method": "create", "name": `"pvc-s1"`, "shareinfo": `{"name":"pvc-s1","vol_path":"/volume1","share_quota":10}`}, nil)
	call(map[string]string{"api": "SYNO.Core.Share.Snapshot", "version": "2", "method": "create", "name": `"pvc-s1"`, "snapinfo": `{"desc":"d"}`}, nil)
	left, err = synologyLeftovers(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(left, "\n")
	for _, want := range []string{"lun pvc-l1", "lun snapshot /lun/" + lun.UUID + "/" + snap.UUID, "target iqn.2000-01.com.synology:e2e.pvc-l1", "share pvc-s1", "share snapshot /share/pvc-s1/GMT"} {
		if !strings.Contains(got, want) {
			t.Errorf("leftovers lack %q:\n%s", want, got)
		}
	}
}
