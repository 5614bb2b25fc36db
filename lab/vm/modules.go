package vm

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// bootRoots are the modules the initramfs needs to mount an ext4 root on
// virtio-blk; their dependencies come from the kernel's modules.dep. ext4
// asks the crypto API for crc32c, which the initramfs cannot modprobe, so the
// generic implementation is loaded explicitly.
var bootRoots = []string{"virtio_pci", "virtio_blk", "crc32c_generic", "ext4"}

// prunedModuleDirs (relative to /lib/modules/<version>/kernel) hold drivers
// for hardware a QEMU storage VM never has; leaving them out of the root
// filesystem halves its size.
var prunedModuleDirs = []string{
	"drivers/gpu", "drivers/media", "drivers/usb", "drivers/bluetooth", "drivers/infiniband",
	"drivers/staging", "drivers/net/wireless", "drivers/net/ethernet", "drivers/net/can",
	"drivers/net/usb", "drivers/net/wwan", "drivers/iio", "drivers/isdn", "drivers/comedi",
	"drivers/hwmon", "drivers/mtd", "drivers/mmc", "drivers/video", "drivers/hid",
	"drivers/platform", "drivers/thunderbolt", "drivers/power/supply", "drivers/leds",
	"sound", "net/wireless", "net/mac80211", "net/bluetooth",
}

// moduleName is the kernel's name of a module file: no directory, no .ko
// suffix (compressed or not), dashes as underscores.
func moduleName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// parseModulesDep reads modules.dep: "<path>: <dep path> ..." per module.
// It returns each module's path and dependency paths, keyed by module name.
func parseModulesDep(r io.Reader) (paths map[string]string, deps map[string][]string, err error) {
	paths = map[string]string{}
	deps = map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		mod, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(mod) == "" {
			return nil, nil, fmt.Errorf("modules.dep line %d: %q is not \"<module>: <deps>\"", n, line)
		}
		mod = strings.TrimSpace(mod)
		name := moduleName(mod)
		paths[name] = mod
		deps[name] = strings.Fields(rest)
	}
	return paths, deps, sc.Err()
}

// bootModules lists the module files (relative paths from modules.dep) to
// insmod, in order, so that each one's dependencies come before it. Roots
// built into the kernel (named in modules.builtin) need nothing; a root that
// is neither a module nor built in is an error naming it.
func bootModules(modulesDep, modulesBuiltin io.Reader, roots []string) ([]string, error) {
	paths, deps, err := parseModulesDep(modulesDep)
	if err != nil {
		return nil, err
	}
	builtin := map[string]bool{}
	if modulesBuiltin != nil {
		sc := bufio.NewScanner(modulesBuiltin)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				builtin[moduleName(l)] = true
			}
		}
	}
	var order []string
	done := map[string]bool{}
	active := map[string]bool{}
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		if done[name] {
			return nil
		}
		if active[name] {
			return fmt.Errorf("modules.dep has a dependency cycle: %s", strings.Join(append(chain, name), " -> "))
		}
		path, ok := paths[name]
		if !ok {
			if builtin[name] {
				done[name] = true
				return nil
			}
			return fmt.Errorf("module %s (needed by %s) is neither in modules.dep nor built in", name, strings.Join(chain, " -> "))
		}
		active[name] = true
		for _, d := range deps[name] {
			if err := visit(moduleName(d), append(chain, name)); err != nil {
				return err
			}
		}
		active[name] = false
		done[name] = true
		order = append(order, path)
		return nil
	}
	for _, r := range roots {
		if err := visit(strings.ReplaceAll(r, "-", "_"), []string{"boot"}); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// pruned reports whether rel (a path under /lib/modules/<version>) lies in
// one of prunedModuleDirs.
func pruned(rel string) bool {
	rel = filepath.ToSlash(rel)
	for _, d := range prunedModuleDirs {
		p := "kernel/" + d
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// copyModules copies /lib/modules/<version> into the root filesystem
// without the pruned directories; depmod then rebuilds the indexes so that
// nothing refers to a pruned module.
func copyModules(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if pruned(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			// build and source point into the kernel headers: not needed.
			return nil
		case d.Type().IsRegular():
			return copyFile(p, target, 0o644)
		}
		return nil
	})
}

// copyFile copies src to dst with the given mode.
func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return out.Close()
}
