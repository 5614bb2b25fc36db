package vm

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// cpioEntry is one member of a newc ("070701") cpio archive, the format the
// kernel unpacks as an initramfs.
type cpioEntry struct {
	Name   string // without a leading slash
	Mode   uint32 // type and permission bits (S_IFDIR, S_IFREG, S_IFCHR...)
	Major  uint32 // of a device node
	Minor  uint32
	Data   []byte // a regular file's content
	Source string // or a host file to read it from
}

// File type bits of a cpio mode.
const (
	cpioDir  = 0o040000
	cpioReg  = 0o100000
	cpioChar = 0o020000
)

// writeCPIO writes entries as a gzip-compressed newc archive. Writing it here
// rather than with cpio(1) lets the archive hold /dev/console without a
// mknod on the host: without that node the kernel starts /init with no
// stdin, stdout or stderr and the boot would be silent.
func writeCPIO(w io.Writer, entries []cpioEntry) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	var off int64
	write := func(b []byte) error {
		n, err := zw.Write(b)
		off += int64(n)
		return err
	}
	pad := func() error {
		if r := off % 4; r != 0 {
			return write(make([]byte, 4-r))
		}
		return nil
	}
	for i, e := range append(entries, cpioEntry{Name: "TRAILER!!!"}) {
		data := e.Data
		if e.Source != "" {
			if data, err = os.ReadFile(e.Source); err != nil {
				return err
			}
		}
		nlink := 1
		if e.Mode&0o170000 == cpioDir {
			nlink = 2
		}
		name := strings.TrimPrefix(e.Name, "/")
		hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			i+1, e.Mode, 0, 0, nlink, 0, len(data), 0, 0, e.Major, e.Minor, len(name)+1, 0)
		if err := write([]byte(hdr + name + "\x00")); err != nil {
			return err
		}
		if err := pad(); err != nil {
			return err
		}
		if err := write(data); err != nil {
			return err
		}
		if err := pad(); err != nil {
			return err
		}
	}
	return zw.Close()
}

// initramfsEntries lays out the boot initramfs: busybox, the /init script,
// the boot modules at their /lib/modules paths and the list that loads them.
func initramfsEntries(busybox, initScript, kver, modRoot string, mods []string) []cpioEntry {
	dirs := map[string]bool{}
	addDir := func(p string) {
		for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			dirs[p] = true
		}
	}
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot"} {
		addDir(d)
	}
	var files []cpioEntry
	var list strings.Builder
	for _, m := range mods {
		name := path.Join("lib/modules", kver, filepath.ToSlash(m))
		addDir(path.Dir(name))
		files = append(files, cpioEntry{Name: name, Mode: cpioReg | 0o644, Source: filepath.Join(modRoot, m)})
		list.WriteString("/" + name + "\n")
	}
	var entries []cpioEntry
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted) // a parent sorts before its children
	for _, d := range sorted {
		entries = append(entries, cpioEntry{Name: d, Mode: cpioDir | 0o755})
	}
	entries = append(entries,
		cpioEntry{Name: "dev/console", Mode: cpioChar | 0o600, Major: 5, Minor: 1},
		cpioEntry{Name: "bin/busybox", Mode: cpioReg | 0o755, Source: busybox},
		cpioEntry{Name: "init", Mode: cpioReg | 0o755, Data: []byte(initScript)},
		cpioEntry{Name: "bootmods.txt", Mode: cpioReg | 0o644, Data: []byte(list.String())},
	)
	return append(entries, files...)
}
