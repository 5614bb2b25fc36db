// Package mounts reads the mount table for the lab's clean-up and reports
// (the demo, the storage VM image build). k8s.io/mount-utils parses
// /proc/self/mountinfo; this package only undoes the kernel's octal escapes
// in the paths (mount-utils leaves "\040" for a space as it is).
package mounts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/mount-utils"
)

// table is the mount table read; a variable so that tests can point it at a file.
var table = "/proc/self/mountinfo"

// List returns the mount table in mount order, with Root, MountPoint and
// Source unescaped. A machine without /proc/self/mountinfo has no mounts.
func List() ([]mount.MountInfo, error) {
	infos, err := mount.ParseMountInfo(table)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for i := range infos {
		infos[i].Root = Unescape(infos[i].Root)
		infos[i].MountPoint = Unescape(infos[i].MountPoint)
		infos[i].Source = Unescape(infos[i].Source)
	}
	return infos, nil
}

// Under lists the mount points at or below dir, in mount order. dir is made
// absolute and its symbolic links resolved, as the kernel reports it.
func Under(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	infos, err := List()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range infos {
		if m.MountPoint == abs || strings.HasPrefix(m.MountPoint, abs+"/") {
			out = append(out, m.MountPoint)
		}
	}
	return out, nil
}

// At returns what is mounted at path (the last mount there, the one in
// effect), or false when nothing is.
func At(path string) (mount.MountInfo, bool, error) {
	infos, err := List()
	if err != nil {
		return mount.MountInfo{}, false, err
	}
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].MountPoint == path {
			return infos[i], true, nil
		}
	}
	return mount.MountInfo{}, false, nil
}

// Unescape undoes mountinfo's octal escapes (\040 for a space, \134 for a
// backslash); anything that is not a three-digit octal escape stays as it is.
func Unescape(s string) string {
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
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return len(s) == 3
}
