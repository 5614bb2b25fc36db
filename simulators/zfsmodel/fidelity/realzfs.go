package fidelity

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Tools names the real zfs and zpool binaries.
type Tools struct{ ZFS, Zpool string }

// FindTools reports whether real zfs answers on this machine: root, the
// zfs and zpool binaries, and a zfs-fuse daemon that answers. The reason
// says what is missing.
func FindTools() (Tools, bool, string) {
	if os.Geteuid() != 0 {
		return Tools{}, false, "real zfs needs root (euid is not 0)"
	}
	var t Tools
	var err error
	if t.ZFS, err = lookPath("zfs"); err != nil {
		return t, false, "zfs not found (run scripts/ensure-zfs-fuse.sh): " + err.Error()
	}
	if t.Zpool, err = lookPath("zpool"); err != nil {
		return t, false, "zpool not found (run scripts/ensure-zfs-fuse.sh): " + err.Error()
	}
	out, err := exec.Command(t.Zpool, "list", "-H", "-o", "name").CombinedOutput()
	if err != nil {
		return t, false, fmt.Sprintf("zpool list fails, is the zfs-fuse daemon running (scripts/ensure-zfs-fuse.sh)? %v: %s",
			err, strings.TrimSpace(string(out)))
	}
	return t, true, ""
}

// lookPath also searches the sbin directories, which a non-login PATH may lack.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not in PATH nor in /usr/sbin, /sbin", name)
}

// PoolName returns a fresh pool name ("sy" and 10 hex digits): unlikely to
// meet an existing pool, and a valid name on every zfs.
func PoolName() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return "sy" + hex.EncodeToString(b)
}

// RealPool is a pool on a sparse file that this package created.
type RealPool struct {
	Name       string
	Mountpoint string
	tools      Tools
}

// CreatePool creates pool name on a sparse file of size bytes in dir, its
// root filesystem mounted at mountpoint. zpool refuses a name in use, so
// a pool it returns is always one this call made.
func CreatePool(tools Tools, name, dir string, size int64, mountpoint string) (*RealPool, error) {
	vdev := filepath.Join(dir, name+".vdev")
	f, err := os.Create(vdev)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(tools.Zpool, "create", "-m", mountpoint, name, vdev).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("zpool create %s on %s: %v: %s", name, vdev, err, strings.TrimSpace(string(out)))
	}
	return &RealPool{Name: name, Mountpoint: mountpoint, tools: tools}, nil
}

// Destroy destroys the pool; zpool unmounts its filesystems. zfs-fuse
// refuses "zpool destroy -f" with "pool is busy" where the plain form
// works, and a pool may stay busy for a moment after its last command.
func (p *RealPool) Destroy() error {
	out, err := exec.Command(p.tools.Zpool, "destroy", p.Name).CombinedOutput()
	for i := 0; i < busyRetries && err != nil && strings.Contains(string(out), busy); i++ {
		time.Sleep(busyPause)
		out, err = exec.Command(p.tools.Zpool, "destroy", p.Name).CombinedOutput()
	}
	if err != nil {
		return fmt.Errorf("zpool destroy %s: %v: %s", p.Name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
