package truenas

// Rows 4, 5 and 13 of issue 15: the SSH endpoint (see fidelity_test.go).

import (
	"strings"
	"testing"
)

// Row 5: where zfs lives over SSH. Every simulated release is SCALE
// (Debian): the tagged middleware of 24.10.2, 25.04.2 and 25.10.1 itself
// calls /usr/sbin/zfs (keychain.py's sudo command list,
// disable-rootfs-protection), so that path answers on every release;
// /usr/local/sbin/zfs is TrueNAS CORE's (FreeBSD), which is not simulated.
func TestFidelitySSHZFSPath(t *testing.T) {
	for _, v := range []string{"24.10", "25.04", "25.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			run := sshRun(t, startServer(t, v))
			for _, cmd := range []string{"/usr/sbin/zfs list -H -o name tank", "/sbin/zfs list -H -o name tank", "zfs list -H -o name tank"} {
				if out, code := run(cmd); code != 0 || out != "tank\n" {
					t.Errorf("%s: %d %q", cmd, code, out)
				}
			}
			if out, code := run("/usr/local/sbin/zfs list"); code != 127 || !strings.Contains(out, "not found") {
				t.Errorf("/usr/local/sbin/zfs on SCALE %s: %d %q, want 127 not found", v, code, out)
			}
		})
	}
}

// Row 4: SCALE serves iSCSI with SCST; while the iSCSI service runs, each
// enabled extent is an SCST device, and democratic-csi's freenas-iscsi
// driver (and the middleware itself, iscsi_/global_linux.py) writes 1 to
// its resync_size after growing the zvol.
func TestFidelitySCSTSysfsResync(t *testing.T) {
	for _, v := range []string{"24.10", "25.10"} {
		t.Run(v, func(t *testing.T) {
			s := startServer(t, v)
			c := dialAny(t, s)
			c.mustCall("pool.dataset.create", map[string]any{"name": "tank/pvc-1", "type": "VOLUME", "volsize": 1 << 20, "sparse": true})
			c.mustCall("iscsi.extent.create", map[string]any{"name": "pvc-1.x", "disk": "zvol/tank/pvc-1"})
			run := sshRun(t, s)
			resync := "echo 1 > /sys/kernel/scst_tgt/devices/pvc-1_x/resync_size"
			if out, code := run(resync); code == 0 || !strings.Contains(out, "nonexistent") {
				t.Errorf("with the iSCSI service stopped: %d %q, want no SCST sysfs", code, out)
			}
			if s.Version().AtLeast(25, 10, 0) {
				c.job("service.control", "START", "iscsitarget", map[string]any{})
			} else {
				c.mustCall("service.start", "iscsitarget", map[string]any{})
			}
			run("zfs set volsize=2M tank/pvc-1")
			if out, code := run(resync); code != 0 || out != "" {
				t.Errorf("%s: %d %q", resync, code, out)
			}
			if out, _ := run("cat /sys/kernel/scst_tgt/devices/pvc-1_x/resync_size"); out != "1\n" {
				t.Errorf("resync_size reads %q after the write", out)
			}
			if out, _ := run("ls /sys/kernel/scst_tgt/devices"); out != "pvc-1_x\n" {
				t.Errorf("SCST devices: %q", out)
			}
			c.mustCall("iscsi.extent.delete", 1)
			if out, code := run("ls /sys/kernel/scst_tgt/devices"); code != 0 || out != "" {
				t.Errorf("SCST devices after deleting the extent: %d %q", code, out)
			}
		})
	}
}

// Row 13: the coreutils an admin or a driver's diagnostics use on the
// TrueNAS SSH endpoint.
func TestFidelitySSHCoreutils(t *testing.T) {
	s := startServer(t, "25.10")
	run := sshRun(t, s)
	run("zfs create tank/data")
	for _, c := range []struct{ cmd, want string }{
		{"printf 'a\\nb\\nc\\n' > /tmp/f; head -n 2 /tmp/f", "a\nb\n"},
		{"tail -1 /tmp/f", "c\n"},
		{"wc -l /tmp/f", "3 /tmp/f\n"},
		{"cat /tmp/f | wc -l", "3\n"},
		{"ls /mnt/tank", "data\n"},
		{"ls -d /mnt/tank/data", "/mnt/tank/data\n"},
		{"basename /mnt/tank/data", "data\n"},
		{"dirname /mnt/tank/data", "/mnt/tank\n"},
		{"readlink -f /mnt/tank/../tank/data", "/mnt/tank/data\n"},
		{"grep -c b /tmp/f", "1\n"},
		{"sort -r /tmp/f | head -1", "c\n"},
		{"zfs list -H -o name | grep -q tank/data && echo found", "found\n"},
		{"date +%Y | wc -c", "5\n"},
	} {
		if out, code := run(c.cmd); code != 0 || out != c.want {
			t.Errorf("%s: %d %q, want %q", c.cmd, code, out, c.want)
		}
	}
	if out, code := run("ls /nope"); code != 2 || !strings.Contains(out, "ls: cannot access '/nope': No such file or directory") {
		t.Errorf("ls of a missing path: %d %q", code, out)
	}
	if out, code := run("head --bogus /tmp/f"); code == 0 || !strings.Contains(out, "invalid option") {
		t.Errorf("head with an unknown option: %d %q", code, out)
	}
}
