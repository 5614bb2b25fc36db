package backends

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// shareLeftovers asks the server, through the ZFS simulator's shell over
// SSH: nothing in a fresh share (whose directories do not exist yet),
// then every volume, snapshot and metadata entry, half-built and
// half-removed copies (dot names) included.
func TestShareLeftoversAskTheServer(t *testing.T) {
	addr := driverbin.ZFSSSH(t, 33000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(cmd string) {
		t.Helper()
		if out, err := SSHRun(ctx, addr, "root", "pw", cmd); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
	}
	run("zfs create -p tank/e2e-clients/nfs")
	left, err := shareLeftovers(ctx, addr, "root", "pw", "/tank/e2e-clients/nfs")
	if err != nil || len(left) != 0 {
		t.Fatalf("a fresh share: %v %v; want nothing", left, err)
	}
	run("mkdir -p /tank/e2e-clients/nfs/v/pvc-1 /tank/e2e-clients/nfs/v/.tmp-pvc-2 /tank/e2e-clients/nfs/s/snapshot-1 /tank/e2e-clients/nfs/.switchyard/volumes /tank/e2e-clients/nfs/.switchyard/snapshots")
	run("echo {} > /tank/e2e-clients/nfs/.switchyard/volumes/pvc-1.json")
	left, err = shareLeftovers(ctx, addr, "root", "pw", "/tank/e2e-clients/nfs")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(left)
	want := []string{".switchyard/volumes/pvc-1.json", "s/snapshot-1", "v/.tmp-pvc-2", "v/pvc-1"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left %v, want %v", left, want)
	}
	if _, err := shareLeftovers(ctx, addr, "root", "wrong", "/tank/e2e-clients/nfs"); err == nil {
		t.Error("a refused login is not an error")
	}
}
