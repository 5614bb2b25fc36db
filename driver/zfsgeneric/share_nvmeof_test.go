package zfsgeneric

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-csi/switchyard/driver/backend"
	"github.com/switchyard-csi/switchyard/driver/zfs"
	"github.com/switchyard-csi/switchyard/driver/zfs/engine"
)

// fakeNvmetcli keeps one subsystem and its link to port 1 as files in
// $STATE. Deleting the subsystem first lets a pending "orphan" link land:
// an nvmetcli script that a killed driver process left running on the host
// links the subsystem after this process unlinked it, before it deleted it.
const fakeNvmetcli = `#!/bin/sh
cwd=
while read -r cmd arg; do
	case "$cmd" in
	cd) cwd=$arg ;;
	delete)
		case "$cwd" in
		/ports/1/subsystems)
			if [ -e "$STATE/linked" ]; then rm "$STATE/linked"
			else echo "Could not unlink $arg in configFS: [Errno 2] No such file or directory: '/sys/kernel/config/nvmet/ports/1/subsystems/$arg'"; fi ;;
		/subsystems)
			if [ -e "$STATE/orphan" ]; then rm "$STATE/orphan"; touch "$STATE/linked"; fi
			if [ -e "$STATE/subsys" ]; then rm "$STATE/subsys"
			else echo "No such Subsystem in configfs: /sys/kernel/config/nvmet/subsystems/$arg"; fi ;;
		esac ;;
	ls)
		case "$arg" in
		"/ports/1/subsystems 1")
			echo "o- subsystems ........ [...]"
			if [ -e "$STATE/linked" ]; then echo "  o- nqn.2003-01.org.test:pvc-1 ........ [...]"; fi ;;
		"/subsystems 1")
			echo "o- subsystems ........ [...]"
			if [ -e "$STATE/subsys" ]; then echo "  o- nqn.2003-01.org.test:pvc-1 ........ [...]"; fi ;;
		esac ;;
	esac
done
`

// Found by the soak with --kill (seed 2): a port link outlived its deleted
// subsystem. Remove unlinks again after the deletion.
func TestNVMeoFRemoveCatchesALinkMadeDuringIt(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "nvmetcli")
	if err := os.WriteFile(cli, []byte(fakeNvmetcli), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STATE", state)
	for _, f := range []string{"subsys", "orphan"} { // made, not yet linked; a link on its way
		if err := os.WriteFile(filepath.Join(state, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host, err := engine.NewCLIHost(backend.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, DriverNVMeoF, engine.CLIConfig{})
	if err != nil {
		t.Fatal(err)
	}
	p := &platform{CLIHost: host, cliLock: make(chan struct{}, 1),
		cfg: settings{driver: DriverNVMeoF, share: shareSettings{basename: "nqn.2003-01.org.test", ports: []string{"1"}, nvmetcli: cli}}}
	props := zfs.Properties{propNVMeoFAssets: {Value: "pvc-1"}}
	if err := (nvmeofShare{d: p}).Remove(context.Background(), "tank/k8s/pvc-1", props); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, f := range []string{"subsys", "linked", "orphan"} {
		if _, err := os.Stat(filepath.Join(state, f)); err == nil {
			t.Errorf("%s is still there after Remove", f)
		}
	}
}

// A delete counts only when the listing at the end of its script shows the
// folder without the object (or no folder at all): an nvmetcli that never
// read the script, or one that complained, leaves the step failed.
func TestNVMeoFGone(t *testing.T) {
	const nqn = "nqn.2003-01.org.test:pvc-1"
	for _, c := range []struct {
		name, out string
		want      bool
	}{
		{"deleted", "o- subsystems ...... [...]\r\n  o- nqn.2003-01.org.test:pvc-10 .... [...]\r\n", true},
		{"still there", "o- subsystems ...... [...]\r\n  o- " + nqn + " .... [...]\r\n", false},
		{"still there, no padding", "o- subsystems [...]\r\n  o- " + nqn, false},
		{"script never read", "", false},
		{"an error and no listing", "Error: something went wrong\n", false},
		{"the port is gone", "No such path /ports/1\n", true},
	} {
		if got := nvmetGone(zfs.Output{Stdout: c.out}, "/subsystems", nqn); got != c.want {
			t.Errorf("%s: nvmetGone = %v; want %v", c.name, got, c.want)
		}
	}
}
