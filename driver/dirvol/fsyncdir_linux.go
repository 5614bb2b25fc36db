package dirvol

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// newNameSyncedByFileFsync reports whether dir is on a file system served
// by Linux's ext4 driver (fsyncdir.go says why that matters): statfs's
// magic is ext2/3/4's, and the mount of dir's device in mountinfo says
// "ext4".
func newNameSyncedByFileFsync(dir string) bool {
	var sfs unix.Statfs_t
	// Statfs_t.Type's width differs between architectures; the magic
	// fits 32 bits.
	if err := unix.Statfs(dir, &sfs); err != nil || uint32(sfs.Type) != unix.EXT4_SUPER_MAGIC {
		return false
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return false
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	return mountTypeOf(bufio.NewScanner(f), unix.Major(st.Dev), unix.Minor(st.Dev)) == "ext4"
}

// mountTypeOf is the file system type of the mounts of device
// major:minor in mountinfo lines (proc(5): the third field is the device,
// the type follows the " - " separator), "" when none or when mounts of
// the device disagree.
func mountTypeOf(s *bufio.Scanner, major, minor uint32) string {
	dev := fmt.Sprintf("%d:%d", major, minor)
	typ := ""
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 3 || fields[2] != dev {
			continue
		}
		_, after, ok := strings.Cut(s.Text(), " - ")
		rest := strings.Fields(after)
		if !ok || len(rest) == 0 || (typ != "" && typ != rest[0]) {
			return ""
		}
		typ = rest[0]
	}
	if s.Err() != nil {
		return ""
	}
	return typ
}
