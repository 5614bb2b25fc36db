package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Host paths the kubelet, containerd and the CNI plugins create even with
// every directory option pointed into the state dir (lab-machine.md).
// recordHostPaths notes which of them did not exist before the node
// started; cleanupHost removes exactly those, so a path someone else owns
// (Docker's containerd also uses /run/containerd) is never removed.
var hostPaths = []string{"/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/var/lib/cni", "/run/containerd", "/opt/cni"}

func (c *Local) createdFile() string { return c.path("host-paths-created") }

func (c *Local) recordHostPaths() error {
	if _, err := os.Stat(c.createdFile()); err == nil {
		return nil // a previous run's record still stands (it was not cleaned up)
	}
	var created []string
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			created = append(created, p)
		}
	}
	return os.WriteFile(c.createdFile(), []byte(strings.Join(created, "\n")+"\n"), 0o644)
}

// cleanupHost undoes what the host node did to the host: pod processes
// and containerd shims, mounts, network devices, kubepods cgroups and the
// recorded host paths.
func (c *Local) cleanupHost() []error {
	var errs []error
	killPodProcesses(c.ContainerdSocket())
	if err := unmountUnder(c.dir, "/var/lib/kubelet", "/run/containerd/io.containerd", "/run/netns/cni-", "/var/run/netns/cni-"); err != nil {
		errs = append(errs, err)
	}
	for _, dev := range []string{nodeVeth, cniBridge} {
		if _, err := os.Stat("/sys/class/net/" + dev); err == nil {
			if err := run("ip", "link", "del", dev); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// The pods' veths went with their network namespaces; their netns files remain.
	if ns, _ := filepath.Glob("/run/netns/cni-*"); len(ns) > 0 {
		for _, n := range ns {
			_ = os.Remove(n)
		}
	}
	removeCgroups("kubepods")
	if b, err := os.ReadFile(c.createdFile()); err == nil {
		for _, p := range strings.Fields(string(b)) {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
			}
		}
		_ = os.Remove(c.createdFile())
	}
	return errs
}

// killPodProcesses kills every process in a kubepods cgroup and every
// containerd shim of the node's containerd: stopping the kubelet and
// containerd leaves both running.
func killPodProcesses(containerdSocket string) {
	for round := 0; round < 3; round++ {
		var victims []int
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			if cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid)); err == nil && strings.Contains(string(cg), ":/kubepods") {
				victims = append(victims, pid)
				continue
			}
			if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
				args := strings.Split(string(cmd), "\x00")
				if len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") && containsArg(args, "-address", containerdSocket) {
					victims = append(victims, pid)
				}
			}
		}
		if len(victims) == 0 {
			return
		}
		for _, pid := range victims {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range victims {
			for i := 0; i < 100; i++ {
				if _, err := procStartTime(pid); err != nil {
					break
				}
				syscall.Nanosleep(&syscall.Timespec{Nsec: 20e6}, nil) //nolint:errcheck // a short sleep
			}
		}
	}
}

func containsArg(args []string, flag, value string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && args[i+1] == value {
			return true
		}
	}
	return false
}

// unmountUnder unmounts (lazily, deepest first) every mount point under
// one of the prefixes.
func unmountUnder(prefixes ...string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		for _, p := range prefixes {
			if mp == p || strings.HasPrefix(mp, strings.TrimSuffix(p, "/")+"/") || (strings.HasSuffix(p, "-") && strings.HasPrefix(mp, p)) {
				points = append(points, mp)
				break
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var failed []string
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
			failed = append(failed, mp+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("unmount: %s", strings.Join(failed, "; "))
	}
	return nil
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroups removes the named top-level cgroup, children first, in
// every cgroup v1 hierarchy and in the v2 one.
func removeCgroups(name string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	if st, err := os.Stat("/sys/fs/cgroup/" + name); err == nil && st.IsDir() {
		roots = append(roots, "/sys/fs/cgroup/"+name)
	}
	for _, r := range roots {
		var dirs []string
		_ = filepath.WalkDir(r, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			_ = syscall.Rmdir(d)
		}
	}
}
