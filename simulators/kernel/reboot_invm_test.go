package kernel_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/kernel"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// The storage host reboots (democratic-csi issue #496: nvmet's
// configuration is lost when the storage host restarts).
//
// TestStorageHostRebootInVM runs inside the storage VM (TestKernelTargetsVM
// boots it). The ZFS-over-SSH simulator runs as a separate process in
// kernel mode on a state directory; through its own shell (zfs, nvmetcli,
// targetcli, as zfs-generic sends them) it gets an NVMe-oF/TCP volume and
// an iSCSI volume, each granted to this node only, and an NFS share. The
// real initiators attach them, ext4 goes on the block volumes and a known
// pattern on all three.
//
// Then the storage side "reboots": the simulator is killed (SIGKILL, no
// Close), and what a reboot takes from the kernel is removed: nvmet's and
// LIO's configfs objects, the loop devices, the NFS exports, mountd and
// the nfsd threads, the bind mounts and the reconciler's ledger on tmpfs.
// The initiator side is left alone: the NVMe controller keeps reconnecting,
// the iSCSI session is in recovery, the NFS mount is hard.
//
// The simulator is started again on the same state directory and address.
// The test asserts that configfs holds the same objects as before the
// reboot, that the SSH host key is the same, that the initiators come back
// by themselves, that the pattern reads back through the mounted
// filesystems and that new writes succeed.
func TestStorageHostRebootInVM(t *testing.T) {
	if os.Getenv(kernel.InVMEnv) != "1" {
		t.Skip("runs inside the storage VM; TestKernelTargetsVM boots it there")
	}
	step := kernel.StepTimer(t)
	for _, m := range []string{"nvmet", "nvmet-tcp", "nvme-tcp", "target_core_mod", "iscsi_target_mod", "iscsi_tcp", "sd_mod", "nfsd", "nfs", "nfsv3"} {
		kernel.VMRun(t, "modprobe", m)
	}
	kernel.StartISCSID(t)

	state := t.TempDir()
	sim := startSimulator(t, state)
	step("simulator started (kernel mode)")
	c := sim.client(t)

	initiator := kernel.InitiatorName(t)
	const hostNQN = "nqn.2014-08.org.nvmexpress:uuid:6b1d2c6e-7d1f-4f4e-9a51-2c0a0f1e0b17"
	nqn, iqn := rebootNQN+":pvc-nvme", rebootIQN+":pvc-iscsi"
	sshRun(t, c, "zfs create -p -V 96M tank/k8s/pvc-nvme && zfs create -p -V 96M tank/k8s/pvc-iscsi")
	sshRun(t, c, "zfs create -p -o sharenfs=rw,no_root_squash tank/k8s/pvc-nfs")
	sshRun(t, c, viaStdin(nvmeScript("pvc-nvme", "tank/k8s/pvc-nvme", hostNQN), "nvmetcli"))
	sshRun(t, c, viaStdin(iscsiScript("pvc-iscsi", "tank/k8s/pvc-iscsi", initiator), "targetcli"))
	step("volumes made through the simulator's shell")

	before := configfsObjects(t)
	for _, want := range []string{
		"nvmet/subsystems/" + nqn + "/attr_allow_any_host=0",
		"nvmet/subsystems/" + nqn + "/allowed_hosts/" + hostNQN + " -> nvmet/hosts/" + hostNQN,
		"nvmet/subsystems/" + nqn + "/namespaces/1/enable=1",
		"nvmet/ports/1/subsystems/" + nqn + " -> nvmet/subsystems/" + nqn,
		"target/iscsi/" + iqn + "/tpgt_1/acls/" + initiator + "/",
		"target/iscsi/" + iqn + "/tpgt_1/attrib/generate_node_acls=0",
		"target/iscsi/" + iqn + "/tpgt_1/enable=1",
	} {
		if !slices.Contains(before, want) {
			t.Fatalf("configfs before the reboot lacks %q:\n  %s", want, strings.Join(before, "\n  "))
		}
	}

	// The initiators, as the node attacher runs them (with a short
	// reconnect delay, so the test waits less).
	kernel.VMRun(t, "nvme", "connect", "--transport", "tcp", "--traddr", "127.0.0.1", "--trsvcid", "4420", "--nqn", nqn,
		"--hostnqn", hostNQN, "--reconnect-delay=1", "--ctrl-loss-tmo=60")
	t.Cleanup(func() { kernel.VMTry("nvme", "disconnect", "--nqn", nqn) })
	nvmeDev := kernel.WaitFor(t, "the namespace's block device", func() string { return kernel.NVMeDevice(nqn) })
	node := []string{"-m", "node", "-T", iqn, "-p", "127.0.0.1:3260"}
	kernel.VMRun(t, "iscsiadm", "-m", "discovery", "-t", "sendtargets", "-p", "127.0.0.1:3260")
	kernel.VMRun(t, "iscsiadm", append(node, "--op=update", "-n", "node.session.timeo.replacement_timeout", "-v", "60")...)
	kernel.VMRun(t, "iscsiadm", append(node, "--login")...)
	t.Cleanup(func() { kernel.VMTry("iscsiadm", append(node, "--logout")...) })
	iscsiDev := kernel.WaitFor(t, "the LUN's disk", func() string { return kernel.ISCSIDisk(iqn) })
	step("attached: " + nvmeDev + ", " + iscsiDev)

	mnt := map[string]string{}
	for name, dev := range map[string]string{"nvme": nvmeDev, "iscsi": iscsiDev} {
		mnt[name] = filepath.Join(t.TempDir(), name)
		kernel.VMRun(t, "mkfs.ext4", "-q", "-F", dev)
		mount(t, mnt[name], "-t", "ext4", dev)
	}
	mnt["nfs"] = filepath.Join(t.TempDir(), "nfs")
	// NFSv3: no NFSv4 grace period to sit out after nfsd restarts.
	mount(t, mnt["nfs"], "-t", "nfs", "-o", "vers=3,nolock,hard,timeo=10,retrans=3", "127.0.0.1:/tank/k8s/pvc-nfs")
	pattern := bytes.Repeat([]byte("switchyard survives a storage host reboot\n"), 1<<14)
	for _, dir := range mnt {
		writeSynced(t, filepath.Join(dir, "pattern"), pattern)
	}
	step("ext4 made, mounted, pattern written (and NFS)")

	// The reboot.
	sim.kill(t)
	rebootStorageSide(t, state)
	step("storage side rebooted (simulator killed, kernel targets removed)")
	if left := configfsObjects(t); len(left) != 0 {
		t.Fatalf("configfs after the reboot still holds:\n  %s", strings.Join(left, "\n  "))
	}
	ctrl := nvmeController(t, nqn)
	kernel.WaitFor(t, "the NVMe controller to lose its target", func() string {
		if s := readTrim(filepath.Join("/sys/class/nvme", ctrl, "state")); s != "live" {
			return s
		}
		return ""
	})
	if s := readTrim(filepath.Join("/sys/class/nvme", ctrl, "state")); s != "connecting" && s != "resetting" {
		t.Errorf("NVMe controller %s is %q while the target is gone, want connecting", ctrl, s)
	}

	sim = startSimulator(t, state)
	step("simulator started again on its state directory")
	c = sim.client(t)
	after := configfsObjects(t)
	if !slices.Equal(before, after) {
		t.Errorf("configfs after the restart differs from before the reboot:\n%s", diffLines(before, after))
	}
	kernel.WaitFor(t, "the NVMe controller to reconnect", func() string {
		if readTrim(filepath.Join("/sys/class/nvme", ctrl, "state")) == "live" {
			return "live"
		}
		return ""
	})
	step("NVMe controller live again")
	kernel.WaitFor(t, "the iSCSI session to log in again", func() string {
		out, _ := kernel.VMTry("iscsiadm", "-m", "session", "-P", "1")
		if strings.Contains(out, iqn) && strings.Contains(out, "iSCSI Session State: LOGGED_IN") {
			return "ok"
		}
		return ""
	})
	step("iSCSI session logged in again")
	if got := kernel.NVMeDevice(nqn); got != nvmeDev {
		t.Errorf("the namespace's device is %q after the reboot, was %s", got, nvmeDev)
	}
	if got := kernel.ISCSIDisk(iqn); got != iscsiDev {
		t.Errorf("the LUN's disk is %q after the reboot, was %s", got, iscsiDev)
	}

	// Read through the devices, not the page cache.
	kernel.VMRun(t, "sh", "-c", "sync; echo 3 >/proc/sys/vm/drop_caches")
	for _, name := range []string{"nvme", "iscsi", "nfs"} {
		got, err := os.ReadFile(filepath.Join(mnt[name], "pattern"))
		if err != nil || !bytes.Equal(got, pattern) {
			t.Errorf("%s: the pattern does not read back after the reboot (%d bytes, %v)", name, len(got), err)
		}
		more := []byte("written after the reboot: " + name + "\n")
		writeSynced(t, filepath.Join(mnt[name], "after"), more)
		if got, err := os.ReadFile(filepath.Join(mnt[name], "after")); err != nil || !bytes.Equal(got, more) {
			t.Errorf("%s: a write after the reboot does not read back: %q, %v", name, got, err)
		}
	}
	if out, _ := kernel.VMTry("dmesg"); strings.Contains(out, "EXT4-fs error") || strings.Contains(out, "Remounting filesystem read-only") {
		t.Errorf("ext4 reported errors:\n%s", grepLines(out, "EXT4-fs"))
	}
	step("pattern read back, new writes synced")
	sshRun(t, c, "zfs list -H -o name tank/k8s/pvc-nvme") // the simulator answers, on its pinned host key
}

const (
	rebootNQN = "nqn.2003-01.org.linux-nvme"
	rebootIQN = "iqn.2003-01.org.linux-iscsi.zfs-sim:sn.0123456789ab"
	// simEnv makes the test binary run the simulator (TestRebootSimulatorProcess).
	simEnv    = "SWITCHYARD_REBOOT_SIM_STATE"
	simAddr   = "127.0.0.1:2222"
	simUser   = "root"
	simPass   = "reboot-test-pw"
	readyLine = "SIMULATOR READY "
)

// nvmeScript is zfs-generic-nvmeof's share script, with the subsystem
// granted to one host as ControllerPublishVolume does.
func nvmeScript(asset, dataset, host string) string {
	return fmt.Sprintf(`
cd /subsystems
create %[1]s:%[2]s
cd %[1]s:%[2]s
set attr allow_any_host=0
cd namespaces
create 1
cd 1
set device path=/dev/zvol/%[3]s
enable
cd /hosts
create %[4]s
cd /subsystems/%[1]s:%[2]s/allowed_hosts
create %[4]s
cd /ports/1/subsystems
create %[1]s:%[2]s
saveconfig savefile=/etc/nvmet/config.json
`, rebootNQN, asset, dataset, host)
}

// iscsiScript is zfs-generic-iscsi's share script with an ACL for one
// initiator instead of demo mode.
func iscsiScript(asset, dataset, initiator string) string {
	return fmt.Sprintf(`
cd /iscsi
create %[1]s:%[2]s
cd /iscsi/%[1]s:%[2]s/tpg1
set attribute authentication=0
set attribute generate_node_acls=0
set attribute demo_mode_write_protect=0
cd /backstores/block
create %[2]s /dev/zvol/%[3]s
cd /iscsi/%[1]s:%[2]s/tpg1/luns
create /backstores/block/%[2]s
cd /iscsi/%[1]s:%[2]s/tpg1/acls
create wwn=%[4]s add_mapped_luns=true
`, rebootIQN, asset, dataset, initiator)
}

// viaStdin is how democratic-csi runs a script: echo it into the tool.
func viaStdin(script, tool string) string {
	return "sh -c '" + `echo "` + strings.TrimSpace(script) + `" | ` + tool + "'"
}

// TestRebootSimulatorProcess is the simulator process of
// TestStorageHostRebootInVM: the ZFS-over-SSH simulator on a ZFS model in
// kernel mode, started as switchyard-lab zfs-ssh --kernel starts it. It
// serves until it is killed.
func TestRebootSimulatorProcess(t *testing.T) {
	state := os.Getenv(simEnv)
	if state == "" {
		t.Skip("the simulator process of TestStorageHostRebootInVM")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	model, err := zfsmodel.Open(zfsmodel.Options{StateDir: filepath.Join(state, "zfs"), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 4 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.New(kernel.Options{Log: log})
	srv, err := zfsssh.New(zfsssh.Options{
		Host:       model,
		Users:      map[string]zfsssh.User{simUser: {Password: simPass}},
		StateDir:   filepath.Join(state, "ssh"),
		NVMetPorts: []zfsssh.NVMetPort{{ID: 1, Trtype: "tcp", Adrfam: "ipv4", Traddr: "127.0.0.1", Trsvcid: "4420"}},
		Logger:     log,
		Kernel:     k,
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start(simAddr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(readyLine + addr.String())
	select {} // until SIGKILL: a crash, not a shutdown
}

// simulator is the simulator process.
type simulator struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
}

// hostKey is the simulator's SSH host key as first seen; a restarted
// simulator must show the same.
var hostKey struct {
	sync.Mutex
	k ssh.PublicKey
}

func startSimulator(t *testing.T, state string) *simulator {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRebootSimulatorProcess$", "-test.timeout", "0")
	cmd.Env = append(os.Environ(), simEnv+"="+state)
	s := &simulator{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), readyLine); ok {
				ready <- a
			}
		}
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.kill(t)
		if t.Failed() {
			t.Logf("simulator log (tail):\n%s", tailString(s.stderr.String(), 60))
		}
	})
	select {
	case <-ready:
		return s
	case <-s.done:
		t.Fatalf("the simulator exited before serving:\n%s", tailString(s.stderr.String(), 40))
	case <-time.After(60 * time.Second):
		t.Fatalf("the simulator did not start in 60 s:\n%s", tailString(s.stderr.String(), 40))
	}
	return nil
}

// kill is the crash: SIGKILL, no Close, so nothing is cleaned up.
func (s *simulator) kill(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		return
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("killing the simulator: %v", err)
	}
	<-s.done
}

func (s *simulator) client(t *testing.T) *ssh.Client {
	t.Helper()
	cfg := &ssh.ClientConfig{
		User: simUser,
		Auth: []ssh.AuthMethod{ssh.Password(simPass)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			hostKey.Lock()
			defer hostKey.Unlock()
			if hostKey.k == nil {
				hostKey.k = key
				return nil
			}
			if !bytes.Equal(hostKey.k.Marshal(), key.Marshal()) {
				return fmt.Errorf("the simulator's host key changed: %s, was %s", ssh.FingerprintSHA256(key), ssh.FingerprintSHA256(hostKey.k))
			}
			return nil
		},
		Timeout: 10 * time.Second,
	}
	c, err := ssh.Dial("tcp", simAddr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func sshRun(t *testing.T, c *ssh.Client, cmd string) string {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("over SSH: %s: %v\n%s", firstLine(cmd), err, out)
	}
	return string(out)
}

// rebootStorageSide removes from the kernel what a reboot of the storage
// host removes, without the simulator's help and without touching the
// initiators (the NVMe controller, the iSCSI session, the NFS mount).
func rebootStorageSide(t *testing.T, state string) {
	t.Helper()
	// nvmet and LIO: every link, then every directory deepest first;
	// configfs refuses to remove default groups, which go with their parent.
	const cfs = "/sys/kernel/config"
	roots := []string{cfs + "/nvmet/ports", cfs + "/nvmet/subsystems", cfs + "/nvmet/hosts", cfs + "/target/iscsi", cfs + "/target/core"}
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				if err := os.Remove(p); err != nil {
					t.Errorf("reboot: removing %s: %v", p, err)
				}
			}
			return nil
		})
	}
	for range 10 {
		var dirs []string
		for _, r := range roots {
			_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() && p != r {
					dirs = append(dirs, p)
				}
				return nil
			})
		}
		slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
		removed := 0
		for _, d := range dirs {
			if os.Remove(d) == nil {
				removed++
			}
		}
		if removed == 0 {
			break
		}
	}
	// Loop devices over the simulator's zvol files.
	out := kernel.VMRun(t, "losetup", "-l", "-n", "-O", "NAME,BACK-FILE")
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[1], state) {
			kernel.VMRun(t, "losetup", "-d", f[0])
		}
	}
	// NFS: exports, mountd, nfsd threads; the exports files of the
	// reconciler stay (they are on disk) but nothing reads them until
	// exportfs runs again.
	kernel.VMRun(t, "exportfs", "-ua")
	kernel.VMRun(t, "rpc.nfsd", "0")
	if out, err := kernel.VMTry("pgrep", "-x", "rpc.mountd"); err == nil {
		for _, pid := range strings.Fields(out) {
			kernel.VMRun(t, "kill", pid)
		}
	}
	// Bind mounts of the shared datasets, and the ledger on tmpfs.
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], "/tank/") {
			kernel.VMRun(t, "umount", f[4])
		}
	}
	if err := os.RemoveAll("/run/switchyard-kernel"); err != nil {
		t.Fatal(err)
	}
}

// configfsObjects lists the simulator's targets in configfs: directories
// (with a trailing /), links (-> their target) and the attributes that
// make a target what it is. Loop devices are named by their backing file
// (a reboot may number them differently).
func configfsObjects(t *testing.T) []string {
	t.Helper()
	const cfs = "/sys/kernel/config/"
	attrs := map[string]bool{"attr_allow_any_host": true, "attr_serial": true, "attr_model": true, "device_path": true,
		"device_uuid": true, "device_nguid": true, "enable": true, "addr_traddr": true, "addr_trsvcid": true, "addr_trtype": true,
		"addr_adrfam": true, "generate_node_acls": true, "authentication": true, "demo_mode_write_protect": true,
		"cache_dynamic_acls": true, "udev_path": true, "vpd_unit_serial": true, "readonly": true, "write_protect": true}
	var out []string
	for _, r := range []string{"nvmet/ports", "nvmet/subsystems", "nvmet/hosts", "target/iscsi", "target/core"} {
		_ = filepath.WalkDir(cfs+r, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == cfs+r {
				return nil //nolint:nilerr // an unreadable configfs entry (a write-only attribute, a vanished object) is left out of the snapshot
			}
			rel := strings.TrimPrefix(p, cfs)
			switch {
			case rel == "target/core/alua" || strings.HasPrefix(rel, "target/iscsi/discovery_auth") ||
				strings.HasSuffix(rel, "/statistics") || strings.HasSuffix(rel, "/ana_groups") || strings.HasSuffix(rel, "/fabric_statistics"):
				if d.IsDir() {
					return filepath.SkipDir
				}
			case d.Type()&fs.ModeSymlink != 0:
				dst, err := filepath.EvalSymlinks(p)
				if err == nil {
					dst = strings.TrimPrefix(dst, cfs)
				}
				out = append(out, rel+" -> "+dst)
			case d.IsDir():
				out = append(out, rel+"/")
			case attrs[d.Name()]:
				v := readTrim(p)
				if strings.HasPrefix(v, "/dev/loop") {
					v = "loop:" + readTrim("/sys/block/"+strings.TrimPrefix(v, "/dev/")+"/loop/backing_file")
				}
				out = append(out, rel+"="+v)
			}
			return nil
		})
	}
	// Entries of the fabric roots that exist whether or not a target does.
	out = slices.DeleteFunc(out, func(s string) bool {
		return s == "target/core/alua/" || strings.HasPrefix(s, "target/iscsi/discovery_auth") || !strings.ContainsAny(strings.TrimSuffix(s, "/"), "/")
	})
	slices.Sort(out)
	return out
}

// nvmeController is the controller (nvme0, ...) of the subsystem.
func nvmeController(t *testing.T, nqn string) string {
	t.Helper()
	ents, _ := os.ReadDir("/sys/class/nvme")
	for _, e := range ents {
		if readTrim(filepath.Join("/sys/class/nvme", e.Name(), "subsysnqn")) == nqn {
			return e.Name()
		}
	}
	t.Fatalf("no NVMe controller for %s", nqn)
	return ""
}

func mount(t *testing.T, dir string, args ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kernel.VMRun(t, "mount", append(args, dir)...)
	t.Cleanup(func() { kernel.VMTry("umount", "-l", dir) })
}

func writeSynced(t *testing.T, p string, data []byte) {
	t.Helper()
	f, err := os.Create(p)
	if err == nil {
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("writing %s: %v", p, err)
	}
	kernel.VMRun(t, "sync", "-f", p)
}

func readTrim(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

func diffLines(a, b []string) string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
