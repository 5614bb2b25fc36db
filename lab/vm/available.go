package vm

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Host paths; variables so that unit tests can point them at fake trees.
var (
	bootDir    = "/boot"
	modulesDir = "/lib/modules"
	busyboxBin = "/bin/busybox"
)

// sbinDirs are searched too: as non-root, PATH often lacks them.
var sbinDirs = []string{"/usr/sbin", "/sbin", "/usr/bin"}

// LookTool finds a host program in PATH or the sbin directories (lab/cluster
// finds its etcd, containerd and socat the same way).
func LookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range sbinDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH or %s", name, strings.Join(sbinDirs, ", "))
}

// Available reports whether this machine can build and boot the VM, and if
// not, what is missing.
func Available() (ok bool, reason string) {
	var missing []string
	need := func(tool, pkg string) {
		if _, err := LookTool(tool); err != nil {
			missing = append(missing, fmt.Sprintf("%s (package %s)", tool, pkg))
		}
	}
	need("qemu-system-x86_64", "qemu-system-x86")
	need("debootstrap", "debootstrap")
	need("mkfs.ext4", "e2fsprogs")
	need("depmod", "kmod")
	if _, err := findKernel(); err != nil {
		missing = append(missing, "a kernel: "+err.Error()+" (package linux-image-amd64)")
	}
	if err := checkStaticBusybox(busyboxBin); err != nil {
		missing = append(missing, err.Error()+" (package busybox-static)")
	}
	if len(missing) > 0 {
		return false, "missing " + strings.Join(missing, "; ") + "; `make deps` (scripts/ensure-vm.sh) installs them"
	}
	if os.Geteuid() != 0 {
		// Booting needs no root, building does (debootstrap chroots).
		if ready, _ := cachedImageReady(DefaultCacheDir()); !ready {
			return false, "the VM image is not built yet and building it needs root (debootstrap); run `switchyard-lab vm build` as root"
		}
	}
	return true, ""
}

// findKernel picks the newest /boot/vmlinuz-<version> whose modules are
// installed: the VM needs the modules the host kernel lacks.
func findKernel() (string, error) {
	paths, _ := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	var versions []string
	for _, p := range paths {
		v := strings.TrimPrefix(filepath.Base(p), "vmlinuz-")
		if _, err := os.Stat(filepath.Join(modulesDir, v, "modules.dep")); err == nil {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		if len(paths) == 0 {
			return "", fmt.Errorf("no %s/vmlinuz-*", bootDir)
		}
		return "", fmt.Errorf("no %s/<version>/modules.dep for any of %s", modulesDir, strings.Join(paths, ", "))
	}
	sort.Slice(versions, func(i, j int) bool { return versionLess(versions[i], versions[j]) })
	return versions[len(versions)-1], nil
}

// versionLess compares kernel versions such as 6.1.0-9-amd64 and
// 6.1.0-56-amd64 by their numeric runs.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		na, ra := leadingNumber(a)
		nb, rb := leadingNumber(b)
		switch {
		case na >= 0 && nb >= 0:
			if na != nb {
				return na < nb
			}
			a, b = ra, rb
		case a[0] != b[0]:
			return a[0] < b[0]
		default:
			a, b = a[1:], b[1:]
		}
	}
	return len(a) < len(b)
}

// leadingNumber returns the number s starts with (-1 if none) and the rest.
func leadingNumber(s string) (int, string) {
	i := 0
	n := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 9 {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i == 0 {
		return -1, s
	}
	return n, s[i:]
}

// checkStaticBusybox makes sure the initramfs gets a busybox that runs
// without a dynamic loader (the initramfs has no libc).
func checkStaticBusybox(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", path)
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; the initramfs needs the static one", path)
		}
	}
	return nil
}
