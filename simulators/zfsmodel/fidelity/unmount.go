package fidelity

import (
	"sort"
	"strings"
	"time"
)

// FuseReal is real zfs on zfs-fuse, which cannot destroy or rename a
// mounted filesystem ("dataset is busy", even with -f) where OpenZFS on
// Linux unmounts it first. Before such a command it unmounts the
// filesystems the command touches; afterwards it mounts again every
// filesystem of the pool that should be mounted (canmount=on), so a
// script sees what OpenZFS would do. Other commands pass through.
type FuseReal struct{ Real }

// ZFS implements Target.
func (t FuseReal) ZFS(args []string, stdin []byte) Result {
	scope, ok := busyScope(args)
	if !ok {
		return t.Real.ZFS(args, stdin)
	}
	pool, _, _ := strings.Cut(scope, "/")
	mounted := t.filesystems(scope, func(mounted, _ string) bool { return mounted == "yes" })
	// Reverse name order puts every child before its parent.
	sort.Sort(sort.Reverse(sort.StringSlice(mounted)))
	for _, ds := range mounted {
		t.Real.ZFS([]string{"unmount", ds}, nil)
	}
	r := t.Real.ZFS(args, stdin)
	// Even unmounted, a filesystem stays busy for a moment at times (the
	// kernel lets go of the FUSE mount late): retry, as drivers do.
	for i := 0; i < busyRetries && strings.Contains(r.Stderr, busy); i++ {
		time.Sleep(busyPause)
		r = t.Real.ZFS(args, stdin)
	}
	// Name order mounts parents first.
	for _, ds := range t.filesystems(pool, func(mounted, canmount string) bool { return mounted == "no" && canmount == "on" }) {
		t.Real.ZFS([]string{"mount", ds}, nil)
	}
	return r
}

const (
	busy        = "is busy\n"
	busyRetries = 30
	busyPause   = 100 * time.Millisecond
)

// busyScope tells whether args is a destroy or rename of a filesystem and
// which subtree it may unmount: the dataset's, or the pool's for
// destroy -R (dependent clones may live anywhere in the pool).
func busyScope(args []string) (string, bool) {
	if len(args) < 2 || args[0] != "destroy" && args[0] != "rename" {
		return "", false
	}
	var operands []string
	recursiveClones := false
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") && len(operands) == 0 {
			recursiveClones = recursiveClones || args[0] == "destroy" && strings.Contains(a, "R")
			continue
		}
		operands = append(operands, a)
	}
	if len(operands) == 0 || strings.Contains(operands[0], "@") {
		return "", false
	}
	if recursiveClones {
		pool, _, _ := strings.Cut(operands[0], "/")
		return pool, true
	}
	return operands[0], true
}

// filesystems lists the filesystems under scope, the pool's root
// filesystem excepted, whose mounted and canmount values satisfy keep;
// in name order.
func (t FuseReal) filesystems(scope string, keep func(mounted, canmount string) bool) []string {
	r := t.Real.ZFS([]string{"list", "-H", "-o", "name,mounted,canmount", "-r", "-t", "filesystem", scope}, nil)
	var names []string
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 && strings.Contains(f[0], "/") && keep(f[1], f[2]) {
			names = append(names, f[0])
		}
	}
	sort.Strings(names)
	return names
}
