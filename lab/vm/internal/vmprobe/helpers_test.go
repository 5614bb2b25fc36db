package vmprobe

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Environment that lab/vm sets for the probe.
const (
	envProbe = "SWITCHYARD_VM_PROBE"      // 1: we run inside the lab VM
	envUdev  = "SWITCHYARD_VM_PROBE_UDEV" // 1: the VM was booted with udev; /dev/disk links must appear
)

// inVM skips t unless the probe runs inside the lab VM: these tests load
// kernel modules and start servers, which is only safe there.
func inVM(t *testing.T) {
	t.Helper()
	if os.Getenv(envProbe) != "1" {
		t.Skipf("runs only inside the lab VM (lab/vm sets %s=1)", envProbe)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the probe must run as root inside the VM")
	}
}

// run runs a command with a minute's timeout and returns its output; a
// failure ends the test with the command and its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := try(name, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	// Under TCG most commands take well under a second; say which do not.
	if d := time.Since(start); d > time.Second {
		t.Logf("%s %s took %s", name, strings.Join(args, " "), d.Round(10*time.Millisecond))
	}
	return out
}

// try runs a command and returns its combined output and an error that
// names the command.
func try(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// cleanup registers a best-effort teardown command whose failure is logged.
func cleanup(t *testing.T, name string, args ...string) {
	t.Cleanup(func() {
		if _, err := try(name, args...); err != nil {
			t.Logf("cleanup: %v", err)
		}
	})
}

// write writes value into a configfs or sysfs attribute.
func write(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatalf("write %q to %s: %v", value, path, err)
	}
}

// mkdir makes a configfs directory (the kernel creates the object) and
// removes it again when the test ends.
func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(path); err != nil {
			t.Logf("cleanup: rmdir %s: %v", path, err)
		}
	})
}

// symlink links a configfs object and unlinks it when the test ends.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatalf("ln -s %s %s: %v", target, link, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(link); err != nil {
			t.Logf("cleanup: rm %s: %v", link, err)
		}
	})
}

// waitFor polls cond every 100 ms until it returns a non-empty string.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if v := cond(); v != "" {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// modprobe loads kernel modules.
func modprobe(t *testing.T, mods ...string) {
	t.Helper()
	for _, m := range mods {
		run(t, "modprobe", m)
	}
}

// backingFile makes a sparse file of size bytes for a target to export.
func backingFile(t *testing.T, size int64) string {
	t.Helper()
	f, err := os.CreateTemp("/var/tmp", "probe-*.img")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	return f.Name()
}

// udevWanted reports whether the host booted the VM with udev, so that the
// /dev/disk links must exist.
func udevWanted(t *testing.T) bool {
	if os.Getenv(envUdev) != "1" {
		return false
	}
	if _, err := os.Stat("/run/udev/control"); err != nil {
		t.Fatalf("%s=1 but udev is not running: %v", envUdev, err)
	}
	return true
}

// link checks that the udev link resolves to dev.
func checkLink(t *testing.T, link, dev string) {
	t.Helper()
	got := waitFor(t, link, 10*time.Second, func() string {
		p, err := filepath.EvalSymlinks(link)
		if err != nil {
			return ""
		}
		return p
	})
	if got != dev {
		t.Fatalf("%s resolves to %s, want %s", link, got, dev)
	}
}

// mkfsMountWrite makes an ext4 filesystem on dev, mounts it, writes and
// reads back a file, and unmounts it: the device really carries data.
func mkfsMountWrite(t *testing.T, dev string) {
	t.Helper()
	run(t, "mkfs.ext4", "-q", "-F", dev)
	mnt := t.TempDir()
	run(t, "mount", dev, mnt)
	want := "written through " + dev + "\n"
	err := os.WriteFile(filepath.Join(mnt, "probe.txt"), []byte(want), 0o644)
	if err == nil {
		run(t, "sync")
	}
	run(t, "umount", mnt)
	if err != nil {
		t.Fatal(err)
	}
	run(t, "mount", "-o", "ro", dev, mnt)
	defer run(t, "umount", mnt)
	got, err := os.ReadFile(filepath.Join(mnt, "probe.txt"))
	if err != nil || string(got) != want {
		t.Fatalf("after remount, probe.txt = %q, %v; want %q", got, err, want)
	}
}

// readTrim reads a sysfs or configfs attribute.
func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
