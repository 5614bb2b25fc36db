package vm

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

//go:embed files/bootrd-init.sh
var bootrdInit string

//go:embed files/lab-init.sh
var labInit string

// Fixed initiator identities of the VM, so that tests can put them in
// target ACLs (allowed hosts, initiator groups).
const (
	HostID       = "5a1b0c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	HostNQN      = "nqn.2014-08.org.nvmexpress:uuid:" + HostID
	InitiatorIQN = "iqn.2024-01.io.switchyard.lab:initiator"
)

// buildPlan is what one build needs.
type buildPlan struct {
	Dir           string // the temporary image directory
	CacheDir      string // holds debs/, debootstrap's download cache
	KernelVersion string
	Packages      []string
	Mirror        string
	Log           io.Writer
}

// buildImage makes the image files in p.Dir: debootstrap, kernel modules,
// identities and init, the ext4 image, the initramfs and the kernel.
func buildImage(ctx context.Context, p buildPlan) error {
	if os.Geteuid() != 0 {
		return errors.New("building the image needs root (debootstrap chroots)")
	}
	root := filepath.Join(p.Dir, "root")
	debs := filepath.Join(p.CacheDir, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return err
	}
	step := func(name string, f func() error) error {
		t := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(p.Log, "vm: %s took %s\n", name, time.Since(t).Round(100*time.Millisecond))
		return nil
	}
	err := step("debootstrap", func() error {
		return runLogged(ctx, p.Log, "debootstrap", "--variant=minbase", "--components=main",
			"--include="+strings.Join(p.Packages, ","), "--cache-dir="+debs, Suite, root, p.Mirror)
	})
	// debootstrap unmounts its chroot's proc and sys itself, except when it fails.
	if uerr := unmountUnder(root); uerr != nil && err == nil {
		err = uerr
	}
	if err != nil {
		return err
	}
	modSrc := filepath.Join(modulesDir, p.KernelVersion)
	if err := step("kernel modules", func() error {
		if err := copyModules(modSrc, filepath.Join(root, "lib/modules", p.KernelVersion)); err != nil {
			return err
		}
		return runLogged(ctx, p.Log, "depmod", "-b", root, p.KernelVersion)
	}); err != nil {
		return err
	}
	if err := step("configuration", func() error { return configureRoot(root) }); err != nil {
		return err
	}
	if err := step("ext4 image", func() error {
		disk := filepath.Join(p.Dir, diskFile)
		return runLogged(ctx, p.Log, "mkfs.ext4", "-q", "-F", "-L", "labroot", "-d", root,
			disk, fmt.Sprintf("%dk", DefaultImageSize/1024))
	}); err != nil {
		return err
	}
	if err := step("initramfs", func() error { return writeInitramfs(p, modSrc) }); err != nil {
		return err
	}
	if err := step("kernel", func() error { return installKernel(p) }); err != nil {
		return err
	}
	return removeBuildDir(root)
}

// installKernel puts the kernel into the image directory: uncompressed
// for a PVH boot when possible (see extractPVHKernel), else the bzImage.
func installKernel(p buildPlan) error {
	bz := filepath.Join(bootDir, "vmlinuz-"+p.KernelVersion)
	err := extractPVHKernel(bz, filepath.Join(p.Dir, pvhKernelFile))
	if err == nil {
		return nil
	}
	fmt.Fprintf(p.Log, "vm: booting the compressed kernel (slower under TCG): %v\n", err)
	return copyFile(bz, filepath.Join(p.Dir, kernelFile), 0o644)
}

// configureRoot installs PID 1 and the fixed identities, and drops what
// only apt needs.
func configureRoot(root string) error {
	files := []struct {
		path, content string
		mode          os.FileMode
	}{
		{"sbin/lab-init", labInit, 0o755},
		{"etc/hostname", "lab\n", 0o644},
		{"etc/hosts", "127.0.0.1 localhost lab\n::1 localhost ip6-localhost\n", 0o644},
		{"etc/nvme/hostnqn", HostNQN + "\n", 0o644},
		{"etc/nvme/hostid", HostID + "\n", 0o644},
		{"etc/iscsi/initiatorname.iscsi", "InitiatorName=" + InitiatorIQN + "\n", 0o644},
		{"etc/fstab", "# the lab VM's init mounts what it needs\n", 0o644},
		// LIO keeps ALUA and persistent-reservation state here and logs its absence.
		{"etc/target/README", "LIO state (lab VM)\n", 0o644},
	}
	for _, f := range files {
		p := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.content), f.mode); err != nil {
			return err
		}
		if err := os.Chmod(p, f.mode); err != nil {
			return err
		}
	}
	for _, glob := range []string{"var/cache/apt/archives/*.deb", "var/cache/apt/*.bin", "var/lib/apt/lists/*_*"} {
		matches, _ := filepath.Glob(filepath.Join(root, glob))
		for _, m := range matches {
			if err := os.Remove(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeInitramfs writes the busybox initramfs with the boot modules of
// the kernel, derived from its modules.dep.
func writeInitramfs(p buildPlan, modSrc string) error {
	dep, err := os.Open(filepath.Join(modSrc, "modules.dep"))
	if err != nil {
		return err
	}
	defer dep.Close()
	var builtin io.Reader
	if f, err := os.Open(filepath.Join(modSrc, "modules.builtin")); err == nil {
		defer f.Close()
		builtin = f
	}
	mods, err := bootModules(dep, builtin, bootRoots)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !strings.HasSuffix(m, ".ko") {
			return fmt.Errorf("module %s is compressed; busybox insmod in the initramfs needs plain .ko files", m)
		}
	}
	fmt.Fprintf(p.Log, "vm: initramfs modules: %s\n", strings.Join(mods, " "))
	f, err := os.Create(filepath.Join(p.Dir, initrdFile))
	if err != nil {
		return err
	}
	if err := writeCPIO(f, initramfsEntries(busyboxBin, bootrdInit, p.KernelVersion, modSrc, mods)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runLogged runs a host command with its output going to log; the error
// carries the output's tail. The whole process group dies with ctx.
func runLogged(ctx context.Context, log io.Writer, name string, args ...string) error {
	path, err := LookTool(name)
	if err != nil {
		return err
	}
	tail := &tailBuffer{max: 4096}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	cmd.Stdout = io.MultiWriter(log, tail)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	fmt.Fprintf(log, "vm: $ %s %s\n", name, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", name, ctx.Err())
		}
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, bytes.TrimSpace(tail.Bytes()))
	}
	return nil
}
