package vmprobe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const nvmetRoot = "/sys/kernel/config/nvmet"

// TestNVMeTCP exports a loop device through nvmet on 127.0.0.1:4420 and
// attaches it with nvme connect, as the nvmeof attacher does.
func TestNVMeTCP(t *testing.T) {
	inVM(t)
	modprobe(t, "nvmet", "nvmet-tcp", "nvme-tcp", "loop")
	img := backingFile(t, 128<<20)
	loop := strings.TrimSpace(run(t, "losetup", "-f", "--show", img))
	cleanup(t, "losetup", "-d", loop)

	const nqn = "nqn.2024-01.io.switchyard.lab:probe-nvme"
	subsys := filepath.Join(nvmetRoot, "subsystems", nqn)
	mkdir(t, subsys)
	write(t, filepath.Join(subsys, "attr_allow_any_host"), "1")
	ns := filepath.Join(subsys, "namespaces", "1")
	mkdir(t, ns)
	write(t, filepath.Join(ns, "device_path"), loop)
	write(t, filepath.Join(ns, "enable"), "1")
	t.Cleanup(func() { os.WriteFile(filepath.Join(ns, "enable"), []byte("0"), 0o644) })
	uuid := readTrim(filepath.Join(ns, "device_uuid"))
	port := filepath.Join(nvmetRoot, "ports", "11")
	mkdir(t, port)
	for attr, v := range map[string]string{"addr_trtype": "tcp", "addr_adrfam": "ipv4", "addr_traddr": "127.0.0.1", "addr_trsvcid": "4420"} {
		write(t, filepath.Join(port, attr), v)
	}
	symlink(t, subsys, filepath.Join(port, "subsystems", nqn))

	if out := run(t, "nvme", "discover", "-t", "tcp", "-a", "127.0.0.1", "-s", "4420"); !strings.Contains(out, nqn) {
		t.Fatalf("nvme discover does not list %s:\n%s", nqn, out)
	}
	start := time.Now()
	run(t, "nvme", "connect", "-t", "tcp", "-a", "127.0.0.1", "-s", "4420", "-n", nqn)
	disconnect := func() { try("nvme", "disconnect", "-n", nqn) }
	t.Cleanup(disconnect)
	dev := waitFor(t, "the namespace's block device", 20*time.Second, func() string { return nvmeDevice(nqn) })
	t.Logf("nvme connect gave %s in %s (namespace uuid %s)", dev, time.Since(start).Round(time.Millisecond), uuid)

	t.Run("by-id", func(t *testing.T) {
		if !udevWanted(t) {
			t.Skip("the VM was booted without udev")
		}
		if uuid == "" {
			t.Fatal("nvmet reports no device_uuid for the namespace")
		}
		checkLink(t, "/dev/disk/by-id/nvme-uuid."+uuid, dev)
	})
	t.Run("ext4", func(t *testing.T) { mkfsMountWrite(t, dev) })

	run(t, "nvme", "disconnect", "-n", nqn)
	waitFor(t, dev+" to go away after disconnect", 20*time.Second, func() string {
		if _, err := os.Stat(dev); err != nil {
			return "gone"
		}
		return ""
	})
}

// nvmeDevice finds the block device of the subsystem with nqn through
// sysfs: /sys/class/nvme-subsystem/<s>/subsysnqn and its namespaces (with
// native multipath the head device nvmeXnY lives in the subsystem).
func nvmeDevice(nqn string) string {
	subs, _ := filepath.Glob("/sys/class/nvme-subsystem/*/subsysnqn")
	for _, s := range subs {
		if readTrim(s) != nqn {
			continue
		}
		dir := filepath.Dir(s)
		for _, pattern := range []string{"nvme*n1", "nvme*/nvme*n1"} {
			if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
				dev := "/dev/" + filepath.Base(m[0])
				if _, err := os.Stat(dev); err == nil {
					return dev
				}
			}
		}
	}
	return ""
}
