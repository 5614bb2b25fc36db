package kernel

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// inVMEnv is set by TestKernelTargetsVM for the binary it runs in the VM.
const inVMEnv = "SWITCHYARD_KERNEL_IN_VM"

// TestInVM runs inside the storage VM (TestKernelTargetsVM boots it): a
// State applied on the real kernel is attached by the real initiators
// (nvme connect, iscsiadm, mount -t nfs, mount -t cifs), grows, changes
// and goes away again.
func TestInVM(t *testing.T) {
	if os.Getenv(inVMEnv) != "1" {
		t.Skip("runs inside the storage VM; TestKernelTargetsVM boots it there")
	}
	r := New(Options{SMBUsers: map[string]string{"labuser": "labpass-123"},
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	step := stepTimer(t)
	if ok, reason := r.Available(); !ok {
		t.Fatalf("the VM's kernel has no targets: %s", reason)
	}
	step("modules loaded")
	for _, m := range []string{"nvme-tcp", "iscsi_tcp", "sd_mod", "nfs", "nfsv4", "nfsv3", "cifs"} {
		vmRun(t, "modprobe", m)
	}
	step("initiator modules loaded")

	dir := t.TempDir() // the VM's /tmp is tmpfs: exports need the fsid the reconciler adds
	vol1, vol2 := sparse(t, dir, "nvme.zvol", 256<<20), sparse(t, dir, "iscsi.zvol", 128<<20)
	chapVol := sparse(t, dir, "chap.zvol", 64<<20)
	nfsSrc, smbSrc := mkdirs(t, filepath.Join(dir, "model/mnt/tank/nfs1")), mkdirs(t, filepath.Join(dir, "model/mnt/tank/smb1"))
	guestSrc := mkdirs(t, filepath.Join(dir, "model/mnt/tank/guest"))
	initiator := initiatorName(t)
	const (
		nqn     = "nqn.2003-01.org.linux-nvme:vm-test"
		iqn     = "iqn.2003-01.org.linux-iscsi.lab:vm-test"
		iqnCHAP = "iqn.2003-01.org.linux-iscsi.lab:vm-chap"
	)
	st := State{
		NVMe: []Subsystem{{NQN: nqn, AllowAnyHost: true, Namespaces: []Namespace{{NSID: 1, Path: vol1, UUID: "4f2d6f63-1c4b-4a43-9d1e-0a1b2c3d4e5f"}},
			Listeners: []Listener{{Addr: "127.0.0.1", Port: 4420}}}},
		ISCSI: []Target{
			{IQN: iqn, LUNs: []LUN{{LUN: 0, Path: vol2}}, Portals: []Portal{{Addr: "127.0.0.1", Port: 3260}}},
			{IQN: iqnCHAP, LUNs: []LUN{{LUN: 0, Path: chapVol}}, Portals: []Portal{{Addr: "127.0.0.1", Port: 3260}},
				CHAP: &CHAP{User: "chapuser", Secret: "chapsecret12"}, InitiatorACLs: []string{initiator}},
		},
		NFS: []Export{{Path: "/tank/nfs1", Source: nfsSrc}},
		SMB: []Share{{Name: "smb1", Path: "/tank/smb1", Source: smbSrc}, {Name: "guest", Path: "/tank/guest", Source: guestSrc, Guest: true}},
	}
	if err := r.Apply("vmtest", st); err != nil {
		t.Fatal(err)
	}
	step("state applied (first time: daemons started)")
	if p := r.newPassForTest(t, "vmtest", st); p.cfs.changes != 0 || p.ran != 0 || len(p.errs) != 0 {
		t.Errorf("re-applying the same state on the real kernel: %d configfs changes, %d commands, errors %v", p.cfs.changes, p.ran, p.errs)
	}
	step("state re-applied (no change)")

	t.Run("nvme", func(t *testing.T) {
		vmRun(t, "nvme", "connect", "-t", "tcp", "-a", "127.0.0.1", "-s", "4420", "-n", nqn)
		defer vmRun(t, "nvme", "disconnect", "-n", nqn)
		dev := waitFor(t, "the namespace's block device", func() string { return nvmeDevice(nqn) })
		step("nvme connect: " + dev)
		if got := blockSize(t, dev); got != 256<<20 {
			t.Errorf("%s is %d bytes, want 256 MiB", dev, got)
		}
		writeReadBlock(t, dev, vol1)
		// The file grows (zfs set volsize): the next Apply refreshes the
		// loop device and nvmet tells the host.
		if err := os.Truncate(vol1, 384<<20); err != nil {
			t.Fatal(err)
		}
		if err := r.Apply("vmtest", st); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the host to see the new size", func() string {
			if blockSize(t, dev) == 384<<20 {
				return "ok"
			}
			return ""
		})
		step("nvme resize seen by the host")
	})

	t.Run("iscsi", func(t *testing.T) {
		startISCSID(t)
		out := vmRun(t, "iscsiadm", "-m", "discovery", "-t", "sendtargets", "-p", "127.0.0.1:3260")
		if !strings.Contains(out, iqn) {
			t.Fatalf("discovery does not list %s:\n%s", iqn, out)
		}
		vmRun(t, "iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "--login")
		defer vmRun(t, "iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "--logout")
		dev := waitFor(t, "the LUN's disk", func() string { return iscsiDisk(iqn) })
		step("iscsi login (demo mode): " + dev)
		if got := blockSize(t, dev); got != 128<<20 {
			t.Errorf("%s is %d bytes, want 128 MiB", dev, got)
		}
		writeReadBlock(t, dev, vol2)

		// The CHAP target: the wrong secret is refused, the right one works.
		node := []string{"-m", "node", "-T", iqnCHAP, "-p", "127.0.0.1:3260"}
		set := func(k, v string) { vmRun(t, "iscsiadm", append(node, "--op=update", "-n", k, "-v", v)...) }
		set("node.session.auth.authmethod", "CHAP")
		set("node.session.auth.username", "chapuser")
		set("node.session.auth.password", "wrong-secret")
		if out, err := vmTry("iscsiadm", append(node, "--login")...); err == nil {
			vmTry("iscsiadm", append(node, "--logout")...)
			t.Fatalf("login with a wrong CHAP secret succeeded:\n%s", out)
		}
		set("node.session.auth.password", "chapsecret12")
		vmRun(t, "iscsiadm", append(node, "--login")...)
		defer vmRun(t, "iscsiadm", append(node, "--logout")...)
		dev = waitFor(t, "the CHAP LUN's disk", func() string { return iscsiDisk(iqnCHAP) })
		step("iscsi login with CHAP and an ACL: " + dev)
		writeReadBlock(t, dev, chapVol)
	})

	t.Run("nfs", func(t *testing.T) {
		for _, opts := range []string{"vers=4.2", "vers=3,nolock"} {
			mnt := mkdirs(t, filepath.Join(t.TempDir(), "mnt"))
			vmRun(t, "mount", "-t", "nfs", "-o", opts, "127.0.0.1:/tank/nfs1", mnt)
			name := "from-nfs-" + strings.NewReplacer("=", "", ",", "").Replace(opts)
			writeFile(t, filepath.Join(mnt, name), "hello")
			vmRun(t, "umount", mnt)
			if b, err := os.ReadFile(filepath.Join(nfsSrc, name)); err != nil || string(b) != "hello" {
				t.Errorf("%s: the file written over NFS is not in the source directory: %q, %v", opts, b, err)
			}
			step("nfs mount " + opts)
		}
	})

	t.Run("smb", func(t *testing.T) {
		for _, c := range []struct{ share, opts, src string }{
			{"smb1", "username=labuser,password=labpass-123,vers=3.0", smbSrc},
			{"guest", "guest,vers=3.1.1", guestSrc},
		} {
			mnt := mkdirs(t, filepath.Join(t.TempDir(), "mnt"))
			vmRun(t, "mount", "-t", "cifs", "//127.0.0.1/"+c.share, mnt, "-o", c.opts)
			writeFile(t, filepath.Join(mnt, "from-smb"), "hello")
			vmRun(t, "umount", mnt)
			if b, err := os.ReadFile(filepath.Join(c.src, "from-smb")); err != nil || string(b) != "hello" {
				t.Errorf("%s: the file written over SMB is not in the source directory: %q, %v", c.share, b, err)
			}
			step("cifs mount //127.0.0.1/" + c.share)
		}
		if _, err := vmTry("mount", "-t", "cifs", "//127.0.0.1/smb1", t.TempDir(), "-o", "username=labuser,password=wrong,vers=3.0"); err == nil {
			t.Error("a cifs mount with a wrong password succeeded")
		}
	})

	// Changing the state in place: the NFS export and the SMB share go, a
	// second namespace comes, the iSCSI target loses its CHAP twin.
	vol3 := sparse(t, dir, "nvme2.zvol", 64<<20)
	st2 := st
	st2.NVMe = []Subsystem{st.NVMe[0]}
	st2.NVMe[0].Namespaces = append(slices.Clone(st.NVMe[0].Namespaces), Namespace{NSID: 2, Path: vol3})
	st2.ISCSI, st2.NFS, st2.SMB = st.ISCSI[:1], nil, st.SMB[1:]
	if err := r.Apply("vmtest", st2); err != nil {
		t.Fatal(err)
	}
	step("state changed")
	if _, err := os.Stat("/sys/kernel/config/nvmet/subsystems/" + nqn + "/namespaces/2"); err != nil {
		t.Errorf("namespace 2 missing: %v", err)
	}
	if _, err := os.Stat("/sys/kernel/config/target/iscsi/" + iqnCHAP); !os.IsNotExist(err) {
		t.Errorf("the CHAP target is still there (%v)", err)
	}
	if out := vmRun(t, "exportfs", "-v"); strings.Contains(out, "/tank/nfs1") {
		t.Errorf("/tank/nfs1 still exported:\n%s", out)
	}

	if err := r.Close("vmtest"); err != nil {
		t.Fatal(err)
	}
	step("closed")
	for _, d := range []string{"/sys/kernel/config/nvmet/subsystems", "/sys/kernel/config/nvmet/ports", "/sys/kernel/config/target/iscsi"} {
		if ents, _ := os.ReadDir(d); len(dirsOnly(ents)) > 0 {
			t.Errorf("%s still holds %v after Close", d, dirsOnly(ents))
		}
	}
	if out := vmRun(t, "losetup", "-l", "-n", "-O", "BACK-FILE"); strings.Contains(out, dir) {
		t.Errorf("loop devices left after Close:\n%s", out)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); bytes.Contains(mounts, []byte(" /tank/")) {
		t.Errorf("bind mounts left after Close:\n%s", mounts)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// stepTimer logs each step with the time since the previous one.
func stepTimer(t *testing.T) func(string) {
	last := time.Now()
	return func(what string) {
		t.Logf("STEP %-50s %6.2f s", what, time.Since(last).Seconds())
		last = time.Now()
	}
}

func vmTry(name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	return out.String(), err
}

func vmRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := vmTry(name, args...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", commandLine(name, args), err, out)
	}
	return out
}

func sparse(t *testing.T, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdirs(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls f (every 100 ms, up to 20 s) until it returns non-empty.
func waitFor(t *testing.T, what string, f func() string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if v := f(); v != "" {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var nvmeNS = regexp.MustCompile(`^nvme\d+(c\d+)?n\d+$`)

// nvmeDevice finds the block device of the subsystem's namespace 1, with
// or without native multipath (nvme-subsys<N>/nvme<N>n1 or nvme<C>/nvme<C>n1).
func nvmeDevice(nqn string) string {
	for _, class := range []string{"/sys/class/nvme-subsystem", "/sys/class/nvme"} {
		ents, _ := os.ReadDir(class)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(class, e.Name(), "subsysnqn"))
			if strings.TrimSpace(string(b)) != nqn {
				continue
			}
			kids, _ := os.ReadDir(filepath.Join(class, e.Name()))
			for _, k := range kids {
				if nvmeNS.MatchString(k.Name()) && !strings.Contains(k.Name(), "c") {
					if _, err := os.Stat("/dev/" + k.Name()); err == nil {
						return "/dev/" + k.Name()
					}
				}
			}
		}
	}
	return ""
}

var attached = regexp.MustCompile(`Attached scsi disk (sd[a-z]+)`)

// iscsiDisk finds the disk of the session with target iqn.
func iscsiDisk(iqn string) string {
	out, err := vmTry("iscsiadm", "-m", "session", "-P", "3")
	if err != nil {
		return ""
	}
	for _, sess := range strings.Split(out, "Target: ")[1:] {
		if !strings.HasPrefix(sess, iqn+" ") && !strings.HasPrefix(sess, iqn+"\n") {
			continue
		}
		if m := attached.FindStringSubmatch(sess); m != nil {
			return "/dev/" + m[1]
		}
	}
	return ""
}

func blockSize(t *testing.T, dev string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(dev), "size"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n * 512
}

// writeReadBlock writes a pattern through the device and finds it in the
// backing file: the initiator reaches the simulator's data.
func writeReadBlock(t *testing.T, dev, file string) {
	t.Helper()
	pattern := bytes.Repeat([]byte("switchyard!"), 373)[:4096]
	f, err := os.OpenFile(dev, os.O_WRONLY|os.O_SYNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(pattern, 1<<20)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("writing %s: %v", dev, err)
	}
	vmTry("blockdev", "--flushbufs", dev)
	got := make([]byte, len(pattern))
	bf, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	if _, err := bf.ReadAt(got, 1<<20); err != nil || !bytes.Equal(got, pattern) {
		t.Errorf("the block written to %s is not in %s (%v)", dev, file, err)
	}
}

func initiatorName(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/etc/iscsi/initiatorname.iscsi")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "InitiatorName="); ok {
			return strings.ToLower(v)
		}
	}
	t.Fatalf("no InitiatorName in /etc/iscsi/initiatorname.iscsi:\n%s", b)
	return ""
}

func startISCSID(t *testing.T) {
	t.Helper()
	if _, err := vmTry("pgrep", "-x", "iscsid"); err == nil {
		return
	}
	vmRun(t, "iscsid")
	time.Sleep(500 * time.Millisecond)
}

// dirsOnly lists the items among ents (directories other than the
// iSCSI fabric's discovery_auth group).
func dirsOnly(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != "discovery_auth" {
			out = append(out, e.Name())
		}
	}
	return out
}
