package dirvol

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The directory's fsync may be left out only for a file this open made:
// openNew tells a new file from one a crash left (which it truncates).
func TestOpenNewTellsANewFileFromALeftOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pvc-a.json")
	fd, created, err := openNew(path)
	if err != nil || !created {
		t.Fatalf("first open: created %v, %v; want a new file", created, err)
	}
	if _, err := unix.Write(fd, []byte("a torn rest")); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	fd, created, err = openNew(path)
	if err != nil || created {
		t.Fatalf("second open: created %v, %v; want the left file, not a new one", created, err)
	}
	unix.Close(fd)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Errorf("the left file after openNew: %v, %v; want it truncated", fi, err)
	}
}

// mountinfo lines (proc(5)) name the type after " - "; the device is
// the third field. ext2's own driver shares ext4's magic but not its
// fsync, so only "ext4" counts; two mounts of one device that disagree,
// or none, give no answer.
func TestMountTypeOf(t *testing.T) {
	const info = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
23 22 0:21 / /dev/shm rw,relatime shared:2 - tmpfs tmpfs rw,size=100k
24 22 8:1 / /mnt/old rw - ext2 /dev/sda1 rw
25 22 8:2 / /mnt/a rw - ext4 /dev/sda2 rw
26 22 8:2 /sub /mnt/b rw - ext3 /dev/sda2 rw
27 22 254:0 /srv /srv\040dir rw,relatime shared:3 - ext4 /dev/vda rw
`
	for _, c := range []struct {
		major, minor uint32
		want         string
	}{
		{254, 0, "ext4"}, // a bind mount of the same device agrees
		{0, 21, "tmpfs"},
		{8, 1, "ext2"},
		{8, 2, ""}, // disagreeing mounts of one device
		{9, 9, ""}, // not mounted
	} {
		if got := mountTypeOf(bufio.NewScanner(strings.NewReader(info)), c.major, c.minor); got != c.want {
			t.Errorf("mountTypeOf(%d:%d) = %q, want %q", c.major, c.minor, got, c.want)
		}
	}
}

// tmpfs is not ext4: the portable sequence there.
func TestNameSyncedWithNewFileNotOnTmpfs(t *testing.T) {
	var sfs unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &sfs); err != nil || sfs.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at /dev/shm")
	}
	if newNameSyncedByFileFsync("/dev/shm") {
		t.Error("tmpfs taken for ext4")
	}
}
