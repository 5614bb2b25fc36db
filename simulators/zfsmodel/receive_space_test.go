package zfsmodel

import (
	"strings"
	"testing"
)

// A stream larger than the destination may still use fails part-way with
// "out of space", as OpenZFS's receive does (ENOSPC while writing), and
// leaves no destination, with or without -s; the same stream fits once
// the quota is raised.
func TestReceiveOutOfSpace(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create tank/src")
	writeFile(t, m, "/tank/src/big.bin", strings.Repeat("x", 600000))
	must(t, m, "zfs snapshot tank/src@s1")
	must(t, m, "zfs create -o quota=300000 tank/small")
	stream := send(t, m, "tank/src@s1")
	for _, args := range [][]string{{"tank/small/dst"}, {"-s", "tank/small/dst2"}} {
		r := recv(m, stream, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "cannot receive new filesystem stream: out of space") {
			t.Fatalf("receive %v into a 300000-byte quota: %d %q; want out of space", args, r.code, r.stderr)
		}
		dst := args[len(args)-1]
		if r := run(m, nil, "zfs", "list", dst); r.code == 0 {
			t.Fatalf("%s exists after the failed receive: %s", dst, r.stdout)
		}
	}
	must(t, m, "zfs set quota=2000000 tank/small")
	if r := recv(m, stream, "tank/small/dst"); r.code != 0 {
		t.Fatalf("receive within the quota: %s", r.stderr)
	}
}
