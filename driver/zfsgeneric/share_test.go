package zfsgeneric

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

func TestAssetName(t *testing.T) {
	tmpl, _ := engine.ParseTemplate("{{ parameters.[csi.storage.k8s.io/pvc/namespace] }}-{{ parameters.[csi.storage.k8s.io/pvc/name] }}")
	d := &platform{cfg: settings{share: shareSettings{namePrefix: "K8s-", nameTemplate: tmpl}}}
	r := engine.ShareRequest{ID: "pvc-1", Name: "pvc-1", Params: map[string]string{"csi.storage.k8s.io/pvc/namespace": "Apps", "csi.storage.k8s.io/pvc/name": "db"}}
	if got, err := d.assetName("iscsi", r); err != nil || got != "k8s-apps-db" {
		t.Fatalf("assetName = %q, %v", got, err)
	}
	r.Params["csi.storage.k8s.io/pvc/name"] = "db\ncd /; delete"
	if _, err := d.assetName("iscsi", r); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "nameTemplate") {
		t.Fatalf("a newline in an asset name: %v", err)
	}
	if err := checkQualifiedName("IQN", "iqn.x:"+strings.Repeat("a", 220), "iscsi"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("long IQN: %v", err)
	}
}

// A call waiting for the host's targetcli/nvmetcli lock gives up at its own
// deadline, without running anything.
func TestCLILockHonoursTheDeadline(t *testing.T) {
	p := &platform{cfg: settings{driver: DriverISCSI}, cliLock: make(chan struct{}, 1)}
	p.cliLock <- struct{}{} // another call's targetcli is running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.runCLI(ctx, []string{"targetcli"}, "ls\n", nil)
	if status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "targetcli") {
		t.Fatalf("err = %v; want ABORTED naming targetcli", err)
	}
}
