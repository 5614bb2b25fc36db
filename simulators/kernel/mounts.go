package kernel

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// Exports and shares name a path (a dataset's mountpoint) whose data lives
// elsewhere (the ZFS model's directory): a bind mount joins the two, as a
// ZFS mount would. Mount points are made and removed with mkdir -p and
// rmdir through Exec, like every other change to the machine.

// neededMounts are a State's bind mounts: mount point -> source.
func neededMounts(s State) map[string]string {
	out := map[string]string{}
	for _, e := range s.NFS {
		if e.Source != "" {
			out[e.Path] = e.Source
		}
	}
	for _, sh := range s.SMB {
		if sh.Source != "" {
			out[sh.Path] = sh.Source
		}
	}
	return out
}

// byDepth sorts mount points parents first.
func byDepth(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := strings.Count(out[i], "/"), strings.Count(out[j], "/")
		if di != dj {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out
}

// mountPoints reads the mount table. The simulators keep their own reader
// rather than use lab/mounts: they stand alone as the storage host and
// depend on nothing of the lab or the driver they are tested with.
func (r *Reconciler) mountPoints() map[string]bool {
	f, err := os.Open(r.o.MountInfo)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out[unescapeMount(fields[4])] = true
		}
	}
	return out
}

// unescapeMount decodes mountinfo's octal escapes (\040 is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// mountBinds makes the owner's bind mounts. A mount that fails keeps its
// export or share out (p.badMounts): serving the empty mount point would
// hide the data.
func (p *pass) mountBinds() {
	want := neededMounts(p.new)
	if len(want) == 0 {
		return
	}
	mounted := p.r.mountPoints()
	for _, mp := range byDepth(want) {
		src := want[mp]
		rec, known := p.l.Mounts[mp]
		if known && rec.Source == src && mounted[mp] {
			continue
		}
		if known && mounted[mp] {
			if _, err := p.exec("umount", mp); err != nil {
				p.badMount(mp, "unmounting %s (it was bound from %s, now wanted from %s): %v", mp, rec.Source, src, err)
				continue
			}
		}
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			p.badMount(mp, "%s: source %s is not a directory", mp, src)
			continue
		}
		made := rec.MadeDir
		if _, err := os.Lstat(mp); errors.Is(err, fs.ErrNotExist) {
			if _, err := p.exec("mkdir", "-p", mp); err != nil {
				p.badMount(mp, "creating mount point %s: %v", mp, err)
				continue
			}
			made = true
		}
		if _, err := p.exec("mount", "--bind", src, mp); err != nil {
			p.badMount(mp, "bind-mounting %s at %s: %v", src, mp, err)
			if made {
				_, _ = p.exec("rmdir", mp)
			}
			delete(p.l.Mounts, mp)
			continue
		}
		p.l.Mounts[mp] = bindMount{Source: src, MadeDir: made}
	}
}

func (p *pass) badMount(mp, format string, a ...any) {
	if p.badMounts == nil {
		p.badMounts = map[string]bool{}
	}
	p.badMounts[mp] = true
	p.fail(format, a...)
}

// unmountBinds removes the bind mounts no owner needs, children first.
// nfsd may still hold a just-unexported mount: its export cache is
// flushed and, if that is not enough, the mount is detached lazily.
func (p *pass) unmountBinds() {
	needed := map[string]bool{}
	for _, st := range p.all {
		for mp := range neededMounts(st) {
			needed[mp] = true
		}
	}
	gone := map[string]string{}
	for mp, rec := range p.l.Mounts {
		if !needed[mp] {
			gone[mp] = rec.Source
		}
	}
	if len(gone) == 0 {
		return
	}
	order := byDepth(gone)
	mounted := p.r.mountPoints()
	for i := len(order) - 1; i >= 0; i-- {
		mp := order[i]
		if mounted[mp] {
			if _, err := p.exec("umount", mp); err != nil {
				_, _ = p.exec("exportfs", "-f")
				if _, err2 := p.exec("umount", mp); err2 != nil {
					if _, err3 := p.exec("umount", "-l", mp); err3 != nil {
						p.fail("unmounting %s: %v", mp, err)
						continue
					}
				}
			}
		}
		if p.l.Mounts[mp].MadeDir {
			_, _ = p.exec("rmdir", mp) // only if empty; a leftover directory is harmless
		}
		delete(p.l.Mounts, mp)
	}
}
