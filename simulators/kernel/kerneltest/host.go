package kerneltest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Host is the machine around a kernel.Reconciler; give its paths, FS and
// Exec to kernel.New:
//
//	kernel.New(kernel.Options{ConfigFS: h.ConfigFS, SysFS: h.SysFS, MountInfo: h.MountInfo,
//		StateDir: h.StateDir, ExportsDir: h.ExportsDir, NFSD: h.NFSD, SMBAddr: h.SMBAddr,
//		FS: h.FS, Exec: h.Exec})
//
// Several reconcilers on one Host act like processes sharing one kernel.
type Host struct {
	t          testing.TB
	Dir        string // the temporary directory holding everything
	FS         *ConfigFS
	ConfigFS   string
	SysFS      string
	MountInfo  string
	StateDir   string
	ExportsDir string
	NFSD       string
	SMBAddr    string // a listener standing in for smbd

	mu       sync.Mutex
	cmds     []string          // every command line run
	stdin    map[string]string // command line -> stdin
	running  map[string]bool   // daemons
	users    map[string]bool
	failing  map[string]error // command name (or "name arg") -> error
	nextLoop int
}

// New makes a Host in a temporary directory of t.
func New(t testing.TB) *Host {
	t.Helper()
	dir := t.TempDir()
	h := &Host{t: t, Dir: dir, FS: newConfigFS(filepath.Join(dir, "configfs")),
		SysFS: filepath.Join(dir, "sys"), MountInfo: filepath.Join(dir, "mountinfo"), NFSD: filepath.Join(dir, "nfsd"),
		StateDir: filepath.Join(dir, "state"), ExportsDir: filepath.Join(dir, "exports.d"),
		stdin: map[string]string{}, running: map[string]bool{}, users: map[string]bool{"root": true}, failing: map[string]error{}}
	h.ConfigFS = h.FS.Root
	for _, d := range []string{h.SysFS, h.NFSD} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(h.MountInfo, []byte("22 1 0:21 / / rw - ext4 /dev/vda rw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	h.SMBAddr = l.Addr().String()
	return h
}

// Tree lists configfs (see ConfigFS.Tree).
func (h *Host) Tree() []string { return h.FS.Tree() }

// File makes a sparse file of size bytes under the host's directory.
func (h *Host) File(name string, size int64) string {
	h.t.Helper()
	p := filepath.Join(h.Dir, "data", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// Mkdir makes a directory under the host's directory.
func (h *Host) Mkdir(name string) string {
	h.t.Helper()
	p := filepath.Join(h.Dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// Commands returns the command lines run since the last call.
func (h *Host) Commands() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.cmds
	h.cmds = nil
	return out
}

// Changing drops the read-only probes (pgrep, id) from a command list.
func Changing(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if !strings.HasPrefix(c, "pgrep ") && !strings.HasPrefix(c, "id ") {
			out = append(out, c)
		}
	}
	return out
}

// Fail makes a command fail with err (nil: succeed again); cmd is a
// program name, "name firstarg" or a whole "name args..." line.
func (h *Host) Fail(cmd string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		delete(h.failing, cmd)
	} else {
		h.failing[cmd] = err
	}
}

// Exec runs a command on the host (a kernel.Exec).
func (h *Host) Exec(_ context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	line := strings.Join(append([]string{name}, args...), " ")
	h.cmds = append(h.cmds, line)
	if stdin != nil {
		h.stdin[line] = string(stdin)
	}
	for _, k := range []string{name, name + " " + strings.Join(args, " "), name + " " + first(args)} {
		if err := h.failing[k]; err != nil {
			return nil, fmt.Errorf("%s: %w", line, err)
		}
	}
	switch name {
	case "losetup":
		return h.losetup(args)
	case "mount":
		if len(args) == 3 && args[0] == "--bind" {
			h.addMount(args[2])
		} else if len(args) == 4 && args[0] == "-t" {
			h.addMount(args[3])
		}
	case "umount":
		h.dropMount(args[len(args)-1])
	case "pgrep":
		if !h.running[args[len(args)-1]] {
			return nil, fmt.Errorf("%s: exit status 1", line)
		}
	case "rpcbind", "rpc.mountd", "rpc.statd":
		h.running[name] = true
	case "rpc.nfsd":
		_ = os.WriteFile(filepath.Join(h.NFSD, "threads"), []byte(args[0]+"\n"), 0o644)
	case "smbd":
		conf := strings.TrimPrefix(args[len(args)-1], "--configfile=")
		run := filepath.Join(filepath.Dir(conf), "run")
		_ = os.MkdirAll(run, 0o755)
		_ = os.WriteFile(filepath.Join(run, "smbd.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	case "id":
		if !h.users[args[len(args)-1]] {
			return nil, fmt.Errorf("%s: exit status 1: no such user", line)
		}
	case "useradd":
		h.users[args[len(args)-1]] = true
	case "modprobe", "exportfs", "smbcontrol", "smbpasswd", "mkdir", "rmdir":
	default:
		return nil, fmt.Errorf("%s: no such command in the fake host", line)
	}
	return nil, nil
}

func first(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

func (h *Host) losetup(args []string) ([]byte, error) {
	switch {
	case len(args) == 3 && args[0] == "-f" && args[1] == "--show":
		n := h.nextLoop
		h.nextLoop++
		dev := fmt.Sprintf("/dev/loop%d", n)
		h.setLoop(dev, args[2])
		return []byte(dev + "\n"), nil
	case len(args) == 2 && args[0] == "-c":
		b, err := os.ReadFile(filepath.Join(h.SysFS, "block", filepath.Base(args[1]), "loop", "backing_file"))
		if err != nil {
			return nil, fmt.Errorf("losetup -c %s: no such device", args[1])
		}
		h.setLoop(args[1], strings.TrimSpace(string(b)))
	case len(args) == 2 && args[0] == "-d":
		if err := os.RemoveAll(filepath.Join(h.SysFS, "block", filepath.Base(args[1]))); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("losetup %v: unexpected arguments", args)
	}
	return nil, nil
}

func (h *Host) setLoop(dev, file string) {
	dir := filepath.Join(h.SysFS, "block", filepath.Base(dev))
	_ = os.MkdirAll(filepath.Join(dir, "loop"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "loop", "backing_file"), []byte(file+"\n"), 0o644)
	var size int64
	if fi, err := os.Stat(file); err == nil {
		size = fi.Size()
	}
	_ = os.WriteFile(filepath.Join(dir, "size"), []byte(strconv.FormatInt(size/512, 10)+"\n"), 0o644)
}

// Mounts lists the mount points.
func (h *Host) Mounts() []string {
	b, _ := os.ReadFile(h.MountInfo)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			out = append(out, unescape(f[4]))
		}
	}
	return out
}

func (h *Host) addMount(mp string) {
	b, _ := os.ReadFile(h.MountInfo)
	esc := strings.ReplaceAll(mp, " ", `\040`)
	b = append(b, []byte(fmt.Sprintf("%d 22 0:30 / %s rw - bind x rw\n", 100+len(h.Mounts()), esc))...)
	_ = os.WriteFile(h.MountInfo, b, 0o644)
}

func (h *Host) dropMount(mp string) {
	b, _ := os.ReadFile(h.MountInfo)
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) > 4 && unescape(f[4]) == mp {
			continue
		}
		keep = append(keep, l)
	}
	_ = os.WriteFile(h.MountInfo, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

// Loops lists the attached loop devices as "loopN=file".
func (h *Host) Loops() []string {
	ents, _ := os.ReadDir(filepath.Join(h.SysFS, "block"))
	var out []string
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(h.SysFS, "block", e.Name(), "loop", "backing_file"))
		out = append(out, e.Name()+"="+strings.TrimSpace(string(b)))
	}
	return out
}

// Stdin is what a command line got on its standard input.
func (h *Host) Stdin(line string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stdin[line]
}

func unescape(s string) string { return strings.ReplaceAll(s, `\040`, " ") }
