package zfsmodel

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzCLI feeds arbitrary command lines to zfs and zpool: no panics, exit
// codes from zfs's set, and a failure always says why on stderr.
func FuzzCLI(f *testing.F) {
	for _, s := range []string{
		"zfs create -p tank/a/b", "zfs create -V 1M tank/v", "zfs list -r -o all tank", "zfs get -o all all",
		"zfs destroy -rR tank", "zfs snapshot -r tank@s", "zfs clone tank@s tank/c", "zfs promote tank/c",
		"zfs rename tank/c tank/d", "zfs rollback -R tank@s", "zfs send -R tank@s", "zfs recv -F tank/r",
		"zfs set a:b=c d:e=f tank", "zfs inherit -rS a:b tank", "zfs get -s local,bogus all", "zfs list -d -1",
		"zfs create -V 16E tank/huge", "zfs create -b 1 -V 1 tank/b", "zfs set quota=1e9 tank", "zfs -",
		"zfs create -o", "zfs list -t", "zfs get -H -p -o", "zfs set =", "zfs send -i", "zpool get all",
		"zpool list -o", "zpool set", "zpool set -", "zfs promote -", "zfs list /", "zfs list ./x",
		"zfs create tank/\xff", "zfs destroy tank/a@%", "zfs destroy tank/a@,,%", "zfs mount -o",
	} {
		f.Add(s)
	}
	m, _ := newModel(f, 1<<30)
	f.Fuzz(func(t *testing.T, line string) {
		words := strings.Fields(line)
		if len(words) == 0 || (words[0] != "zfs" && words[0] != "zpool") {
			return
		}
		r := run(m, bytes.NewReader([]byte(line)), words...)
		switch r.code {
		case 0, 1, 2, 255:
		default:
			t.Fatalf("%q: exit %d", line, r.code)
		}
		if r.code != 0 && r.stderr == "" {
			t.Fatalf("%q: exit %d without a message", line, r.code)
		}
	})
}
