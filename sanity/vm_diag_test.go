package sanity

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// In the VM, a node spec whose NFS mount failed prints what the NFS server
// and a verbose retry of the mount say, so that a VM run's output explains
// the failure without another run.
var nfsMountRE = regexp.MustCompile(`mount -t nfs (\S+:\S+)`)

var _ = ReportAfterEach(func(r SpecReport) {
	if !kernelMode() || !r.Failed() {
		return
	}
	m := nfsMountRE.FindStringSubmatch(r.Failure.Message)
	if m == nil {
		return
	}
	run := func(timeout time.Duration, name string, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		// mount(8) leaves mount.nfs holding the output pipe when the
		// timeout kills it: without a wait delay the diagnosis itself
		// hung (a VM run, 2026-11-26) and the dmesg below never printed.
		cmd.WaitDelay = 2 * time.Second
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(os.Stdout, "DIAG $ %s %q: err=%v\n%s\n", name, args, err, out)
	}
	dir, _ := os.MkdirTemp("", "nfsdiag")
	defer os.Remove(dir)
	run(5*time.Second, "sh", "-c", "dmesg | tail -25")
	run(5*time.Second, "sh", "-c", "cat /etc/exports /etc/exports.d/* 2>&1; exportfs -v; cat /proc/fs/nfsd/threads /proc/fs/nfsd/versions; ps -eo pid,stat,wchan:24,args | grep -E 'rpc|nfs|mount|exportfs' | grep -v grep; pgrep -x rpc.mountd >/dev/null || echo 'rpc.mountd is NOT running'; ss -ltn; grep -E 'nfs|volume' /proc/mounts")
	run(5*time.Second, "sh", "-c", "cat /proc/net/rpc/nfsd.export/content /proc/net/rpc/nfsd.fh/content /proc/net/rpc/auth.unix.ip/content 2>&1 | tail -40")
	run(25*time.Second, "mount", "-v", "-t", "nfs", "-o", "vers=4.2,retry=0", m[1], dir)
	run(10*time.Second, "umount", "-l", dir)
	run(25*time.Second, "mount", "-v", "-t", "nfs", "-o", "vers=3,nolock,retry=0", m[1], dir)
	run(10*time.Second, "umount", "-l", dir)
	run(5*time.Second, "sh", "-c", "dmesg | tail -25")
})
