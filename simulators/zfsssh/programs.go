package zfsssh

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// proc is the context one program runs in.
type proc struct {
	ctx   context.Context
	env   *sessionEnv
	root  bool // effective uid 0
	std   stdio
	depth int    // shell nesting depth, for Records of nested shells
	path  string // the program's resolved absolute path
	// framing: run by a shell session's own shell (the driver's framing
	// around a program), not by the program: no faults, no record.
	framing bool
}

// userName is the effective user's name.
func (p *proc) userName() string {
	if p.root {
		return "root"
	}
	return p.env.user.name
}

func (p *proc) printf(format string, a ...any) { fmt.Fprintf(p.std.err, format, a...) }

type program func(p *proc, argv []string) int

// lookupProgram maps a command name (the values of Options.Paths) to its
// implementation.
func lookupProgram(name string) program {
	switch name {
	case "zfs":
		return zfsCmd
	case "zpool":
		return zpoolCmd
	case "sudo":
		return sudoCmd
	case "chroot":
		return chrootCmd
	case "sh", "bash":
		return shCmd
	case "echo":
		return func(p *proc, argv []string) int { return echoCmd(argv, p.std.out, false) }
	case "cat":
		return catCmd
	case "true":
		return func(*proc, []string) int { return 0 }
	case "false":
		return func(*proc, []string) int { return 1 }
	case "uname":
		return unameCmd
	case "whoami":
		return whoamiCmd
	case "id":
		return idCmd
	case "test", "[":
		return func(p *proc, argv []string) int { return testCmd(p, argv, path.Base(argv[0])+": ") }
	case "chmod":
		return chmodCmd
	case "chown":
		return chownCmd
	case "setfacl":
		return setfaclCmd
	case "nfs4_setfacl":
		return nfs4SetfaclCmd
	case "touch":
		return touchCmd
	case "mkdir":
		return mkdirCmd
	case "sleep":
		return sleepCmd
	case "targetcli":
		return targetcliCmd
	case "nvmetcli":
		return nvmetcliCmd
	case "xargs":
		return xargsCmd
	case "ps":
		return psCmd
	case "kill":
		return killCmd
	}
	return coreutils[name]
}

func programNames() []string {
	names := []string{"[", "bash", "cat", "chmod", "chown", "chroot", "echo", "false", "id", "kill", "mkdir", "nfs4_setfacl", "nvmetcli",
		"ps", "setfacl", "sh", "sleep", "sudo", "targetcli", "test", "touch", "true", "uname", "whoami", "xargs", "zfs", "zpool"}
	names = append(names, coreutilNames()...)
	sort.Strings(names)
	return names
}

// DefaultPaths is the program table of a Debian 12 ZFS host with
// targetcli-fb, nvmetcli and the ACL tools installed (/bin and /sbin are
// merged into /usr there, so both spellings exist).
func DefaultPaths() map[string]string {
	m := map[string]string{}
	add := func(name string, paths ...string) {
		for _, p := range paths {
			m[p] = name
		}
	}
	add("zfs", "/sbin/zfs", "/usr/sbin/zfs")
	add("zpool", "/sbin/zpool", "/usr/sbin/zpool")
	add("chroot", "/usr/sbin/chroot", "/sbin/chroot")
	add("nvmetcli", "/usr/sbin/nvmetcli", "/sbin/nvmetcli", "/usr/bin/nvmetcli", "/bin/nvmetcli")
	add("sh", "/bin/sh", "/usr/bin/sh", "/bin/dash", "/usr/bin/dash")
	for _, name := range []string{"sudo", "targetcli", "bash", "echo", "cat", "true", "false", "uname", "whoami", "id",
		"test", "[", "chmod", "chown", "touch", "mkdir", "sleep", "setfacl", "nfs4_setfacl", "xargs", "ps", "kill"} {
		add(name, "/usr/bin/"+name, "/bin/"+name)
	}
	for _, name := range coreutilNames() {
		add(name, "/usr/bin/"+name, "/bin/"+name)
	}
	return m
}

// searchPath is root's PATH on Debian (sudo's secure_path is the same).
var searchPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// resolve finds the program for argv[0]: an absolute path must be in the
// table; a bare name is searched along PATH.
func (s *Server) resolve(name string) (prog, file string, ok bool) {
	if strings.Contains(name, "/") {
		if !strings.HasPrefix(name, "/") {
			return "", "", false
		}
		p := path.Clean(name)
		prog, ok = s.paths[p]
		return prog, p, ok
	}
	// Each candidate is built in one buffer, and the map lookup of
	// string(buf) copies nothing: only the path found becomes a string
	// (the framing's printfs and sh are found in the fourth directory).
	var buf [128]byte
	for _, dir := range searchPath {
		k := append(append(append(buf[:0], dir...), '/'), name...)
		if prog, ok := s.paths[string(k)]; ok {
			return prog, string(k), true
		}
	}
	return "", "", false
}

// runProgram applies the faults for name, then runs it.
func (s *Server) runProgram(p *proc, name string, argv []string) int {
	s.syncDynamic()
	if p.framing {
		return s.afterProgram(p, name, argv, lookupProgram(name)(p, argv))
	}
	if st, failed := s.applyFaults(p, name); failed {
		return st
	}
	return s.afterProgram(p, name, argv, lookupProgram(name)(p, argv))
}

// applyFaults sleeps for the command's latency, then decides whether it
// fails instead of running (status, true).
func (s *Server) applyFaults(p *proc, name string) (int, bool) {
	if d := s.faults.Delay(name); d > 0 {
		p.env.wait()
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-p.ctx.Done():
			t.Stop()
			return 130, true
		}
	}
	if s.faults.Fail(name) {
		fmt.Fprintln(p.std.err, "injected fault")
		return 1, true
	}
	return 0, false
}
