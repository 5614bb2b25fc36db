package vmprobe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const targetRoot = "/sys/kernel/config/target"

// TestISCSI exports a file through LIO (raw configfs, as the targets the
// lab builds) on 127.0.0.1:3260 and logs in with open-iscsi, as the iscsi
// attacher does.
func TestISCSI(t *testing.T) {
	inVM(t)
	modprobe(t, "target_core_mod", "iscsi_target_mod", "target_core_file", "iscsi_tcp", "sd_mod")
	const size = 128 << 20
	img := backingFile(t, size)

	const iqn = "iqn.2024-01.io.switchyard.lab:probe-iscsi"
	hba := filepath.Join(targetRoot, "core", "fileio_21")
	mkdir(t, hba)
	disk := filepath.Join(hba, "disk1")
	mkdir(t, disk)
	write(t, filepath.Join(disk, "control"), fmt.Sprintf("fd_dev_name=%s,fd_dev_size=%d", img, size))
	write(t, filepath.Join(disk, "enable"), "1")
	// The fabric's directory appears on the first mkdir, once per boot.
	if err := os.MkdirAll(filepath.Join(targetRoot, "iscsi"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(targetRoot, "iscsi", iqn))
	tpg := filepath.Join(targetRoot, "iscsi", iqn, "tpgt_1")
	mkdir(t, tpg)
	lun := filepath.Join(tpg, "lun", "lun_0")
	mkdir(t, lun)
	symlink(t, disk, filepath.Join(lun, "disk1"))
	mkdir(t, filepath.Join(tpg, "np", "127.0.0.1:3260"))
	for attr, v := range map[string]string{"authentication": "0", "generate_node_acls": "1", "demo_mode_write_protect": "0", "cache_dynamic_acls": "1"} {
		write(t, filepath.Join(tpg, "attrib", attr), v)
	}
	write(t, filepath.Join(tpg, "enable"), "1")
	t.Cleanup(func() { os.WriteFile(filepath.Join(tpg, "enable"), []byte("0"), 0o644) })

	if _, err := try("pgrep", "-x", "iscsid"); err != nil {
		run(t, "iscsid")
	}
	// iscsiadm fails while iscsid is still starting: retry discovery briefly.
	var out string
	waitFor(t, "iscsiadm discovery", 20*time.Second, func() string {
		var err error
		if out, err = try("iscsiadm", "-m", "discovery", "-t", "sendtargets", "-p", "127.0.0.1:3260"); err == nil {
			return "ok"
		}
		return ""
	})
	if !strings.Contains(out, iqn) {
		t.Fatalf("discovery does not list %s:\n%s", iqn, out)
	}
	start := time.Now()
	run(t, "iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "--login")
	cleanup(t, "iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "-o", "delete")
	logout := func() { try("iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "--logout") }
	t.Cleanup(logout)
	dev := waitFor(t, "the LUN's block device", 20*time.Second, func() string { return iscsiDevice(iqn) })
	t.Logf("iscsiadm --login gave %s in %s", dev, time.Since(start).Round(time.Millisecond))

	t.Run("by-path", func(t *testing.T) {
		if !udevWanted(t) {
			t.Skip("the VM was booted without udev")
		}
		checkLink(t, "/dev/disk/by-path/ip-127.0.0.1:3260-iscsi-"+iqn+"-lun-0", dev)
	})
	t.Run("ext4", func(t *testing.T) { mkfsMountWrite(t, dev) })

	run(t, "iscsiadm", "-m", "node", "-T", iqn, "-p", "127.0.0.1:3260", "--logout")
	if _, err := os.Stat(dev); err == nil {
		waitFor(t, dev+" to go away after logout", 20*time.Second, func() string {
			if _, err := os.Stat(dev); err != nil {
				return "gone"
			}
			return ""
		})
	}
}

// iscsiDevice finds the disk of the session logged in to iqn through sysfs.
func iscsiDevice(iqn string) string {
	sessions, _ := filepath.Glob("/sys/class/iscsi_session/session*")
	for _, s := range sessions {
		if readTrim(filepath.Join(s, "targetname")) != iqn {
			continue
		}
		blocks, _ := filepath.Glob(filepath.Join(s, "device", "target*", "*", "block", "*"))
		for _, b := range blocks {
			dev := "/dev/" + filepath.Base(b)
			if _, err := os.Stat(dev); err == nil {
				return dev
			}
		}
	}
	return ""
}
