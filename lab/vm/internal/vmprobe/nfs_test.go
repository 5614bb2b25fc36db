package vmprobe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNFS exports a directory with the kernel nfsd and mounts it over NFS
// 4.2 from 127.0.0.1, as the nfs attacher does.
func TestNFS(t *testing.T) {
	inVM(t)
	modprobe(t, "nfsd", "nfs", "nfsv4")
	if !mountedAt("/proc/fs/nfsd") {
		run(t, "mount", "-t", "nfsd", "nfsd", "/proc/fs/nfsd")
	}
	pipefs := "/var/lib/nfs/rpc_pipefs"
	if err := os.MkdirAll(pipefs, 0o755); err != nil {
		t.Fatal(err)
	}
	if !mountedAt(pipefs) {
		run(t, "mount", "-t", "rpc_pipefs", "sunrpc", pipefs)
	}
	export := t.TempDir()
	if err := os.WriteFile("/etc/exports", []byte(export+" 127.0.0.1(rw,sync,no_subtree_check,no_root_squash,fsid=1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := try("pgrep", "-x", "rpcbind"); err != nil {
		run(t, "rpcbind", "-w")
	}
	run(t, "exportfs", "-ra")
	if out := run(t, "exportfs", "-v"); !strings.Contains(out, export) {
		t.Fatalf("exportfs -v does not list %s:\n%s", export, out)
	}
	if _, err := try("pgrep", "-x", "rpc.mountd"); err != nil {
		run(t, "rpc.mountd")
	}
	run(t, "rpc.nfsd", "4")
	cleanup(t, "rpc.nfsd", "0")
	cleanup(t, "exportfs", "-ua")

	mnt := t.TempDir()
	run(t, "mount", "-t", "nfs", "-o", "vers=4.2", "127.0.0.1:"+export, mnt)
	unmount := func() { try("umount", mnt) }
	t.Cleanup(unmount)
	if opts := mountOptions(mnt); !strings.Contains(opts, "vers=4.2") {
		t.Errorf("the NFS mount's options %q lack vers=4.2", opts)
	}
	want := "written over NFS\n"
	if err := os.WriteFile(filepath.Join(mnt, "probe.txt"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "umount", mnt)
	if got, err := os.ReadFile(filepath.Join(export, "probe.txt")); err != nil || string(got) != want {
		t.Fatalf("server side probe.txt = %q, %v; want %q", got, err, want)
	}
}

// mountedAt reports whether a filesystem is mounted at path.
func mountedAt(path string) bool { return mountOptions(path) != "" }

// mountOptions returns the options of the mount at path, "" if none.
func mountOptions(path string) string {
	b, _ := os.ReadFile("/proc/mounts")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 4 && f[1] == path {
			return f[3]
		}
	}
	return ""
}
