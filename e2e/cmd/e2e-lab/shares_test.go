package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-csi/switchyard/e2e/backends"
	"github.com/switchyard-csi/switchyard/e2e/internal/driverbin"
)

// makeShares against the ZFS-over-SSH simulator (switchyard-lab zfs-ssh,
// without --kernel) and lab/cluster's own vm-mounts.sh standing in for the
// VM's node, with a fake mount(8): the two datasets exist with their
// share properties, the node is asked to mount the NFS export and the SMB
// share (credentials in a file, not in the request) at the controllers'
// paths, and the lab file's shareClients names them. A second run (a kept
// cluster) finds everything in place; a refused mount is an error naming
// the share and mount's message.
func TestMakeShares(t *testing.T) {
	addr := driverbin.ZFSSSH(t, 34000)
	z := &backends.ZFSHost{SSH: addr, User: "root", Password: "pw"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(ctx context.Context, cmd string) (string, error) {
		return backends.SSHRun(ctx, z.SSH, z.User, z.Password, cmd)
	}

	// The VM's node: vm-mounts.sh every 50 ms, mount faked.
	dir := t.TempDir()
	mounts, bin, root := filepath.Join(dir, "mounts"), filepath.Join(dir, "bin"), filepath.Join(dir, "root")
	for _, d := range []string{mounts, bin, root} {
		must(t, os.Mkdir(d, 0o755))
	}
	calls := filepath.Join(dir, "calls")
	must(t, os.WriteFile(filepath.Join(bin, "mount"), []byte("#!/bin/sh\necho \"mount $*\" >>'"+calls+"'\ncase \"$*\" in *refused*) echo 'mount error(13): Permission denied'; exit 32 ;; esac\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "mountpoint"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "timeout"), []byte("#!/bin/sh\nshift\nexec \"$@\"\n"), 0o755))
	script := filepath.Join("..", "..", "..", "lab", "cluster", "files", "vm-mounts.sh")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			cmd := exec.Command("/bin/sh", script, mounts, root)
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("vm-mounts.sh: %v: %s", err, out)
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()

	c, err := makeShares(ctx, run, z, mounts, root, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := backends.ShareClients{NFSExport: "/tank/e2e-clients/nfs", NFSMount: root + "/clients-nfs",
		SMBShare: "tank_e2e_clients_smb", SMBPath: "/tank/e2e-clients/smb", SMBMount: root + "/clients-smb"}
	if *c != want {
		t.Errorf("shares %+v\nwant %+v", *c, want)
	}
	for ds, want := range map[string]string{"tank/e2e-clients/nfs\tsharenfs\t" + nfsShareOptions: "nfs", "tank/e2e-clients/smb\tsharesmb\ton": "smb"} {
		name := strings.SplitN(ds, "\t", 2)[0]
		out, err := run(ctx, "zfs get -H -o name,property,value sharenfs,sharesmb "+name)
		if err != nil || !strings.Contains(out, ds) {
			t.Errorf("%s share: %v\n%s", want, err, out)
		}
	}
	b, _ := os.ReadFile(calls)
	for _, w := range []string{
		"mount -t nfs 127.0.0.1:/tank/e2e-clients/nfs " + root + "/clients-nfs",
		"mount -t cifs -o credentials=/lab/mounts/clients-smb.cred //127.0.0.1/tank_e2e_clients_smb " + root + "/clients-smb",
	} {
		if !strings.Contains(string(b), w) {
			t.Errorf("no %q in\n%s", w, b)
		}
	}
	if strings.Contains(string(b), "pw") {
		t.Errorf("the SMB password is on a command line:\n%s", b)
	}
	if cred, err := os.ReadFile(filepath.Join(mounts, "clients-smb.cred")); err != nil || string(cred) != "username=root\npassword=pw\n" {
		t.Errorf("credentials file: %q %v", cred, err)
	}

	// Again, as a kept cluster's next run does: the same answer.
	if c2, err := makeShares(ctx, run, z, mounts, root, 10*time.Second); err != nil || *c2 != want {
		t.Errorf("second run: %+v %v", c2, err)
	}

	// A share the node cannot mount.
	err = requestMount(ctx, mounts, "bad", "type=cifs\nsource=//127.0.0.1/refused\ntarget="+root+"/bad\n", 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "could not mount bad (exit 32)") || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("a refused mount: %v", err)
	}
	// Nobody answering is an error naming the request, within the wait.
	must(t, os.Mkdir(filepath.Join(dir, "nobody"), 0o755))
	start := time.Now()
	err = requestMount(ctx, filepath.Join(dir, "nobody"), "x", "type=nfs\n", 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not answer the mount request x") || time.Since(start) > 5*time.Second {
		t.Errorf("no answer: %v after %s", err, time.Since(start))
	}
}

func TestSMBShareName(t *testing.T) {
	if got := smbShareName("tank/e2e-clients/smb"); got != "tank_e2e_clients_smb" {
		t.Errorf("%q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
