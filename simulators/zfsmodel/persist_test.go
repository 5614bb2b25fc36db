package zfsmodel

import (
	"os"
	"strings"
	"testing"
)

func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	opts := Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}, {Name: "pool2", Size: 1 << 29}}}
	m, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"zfs create -p tank/k8s/vols/a", "zfs set org:x=1 tank/k8s", "zfs set compression=zstd tank/k8s/vols",
		"zfs create -V 8M tank/k8s/vols/v", "zfs snapshot -r tank/k8s@s1", "zfs clone tank/k8s/vols/a@s1 tank/k8s/vols/c",
		"zfs set mountpoint=/export/c tank/k8s/vols/c", "zpool set listsnapshots=on tank", "zfs create pool2/other",
	} {
		must(t, m, l)
	}
	writeFile(t, m, "/tank/k8s/vols/a/file", "persisted")
	zv, _ := m.ZvolPath("tank/k8s/vols/v")
	os.WriteFile(zv, append([]byte("zvol"), make([]byte, 8<<20-4)...), 0o600)
	listing := must(t, m, "zfs list -H -t all -o name,origin,guid,createtxg,org:x,compression,mountpoint,volsize")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if r := sh(m, "zfs list"); r.code != 1 || !strings.Contains(r.stderr, "closed") {
		t.Errorf("a closed model answered: %+v", r)
	}

	m2, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if got := must(t, m2, "zfs list -H -t all -o name,origin,guid,createtxg,org:x,compression,mountpoint,volsize"); got != listing {
		t.Errorf("state changed across Close/Open:\n%s\nwas:\n%s", got, listing)
	}
	if got := files(t, m2, "/tank/k8s/vols/a"); got != "file=persisted" {
		t.Errorf("filesystem data: %q", got)
	}
	if got := files(t, m2, "/export/c"); got != "" {
		t.Errorf("clone data: %q", got)
	}
	zv2, ok := m2.ZvolPath("tank/k8s/vols/v")
	if b, _ := os.ReadFile(zv2); !ok || string(b[:4]) != "zvol" {
		t.Errorf("zvol data lost")
	}
	if got := must(t, m2, "zpool get -H -o value listsnapshots tank"); got != "on\n" {
		t.Errorf("pool property: %q", got)
	}
	if ps := m2.Pools(); len(ps) != 2 || ps[0].Name != "pool2" || ps[1].Name != "tank" || ps[1].Size != 1<<30 || ps[1].Free > ps[1].Size {
		t.Errorf("Pools: %+v", ps)
	}
	// New objects get new txgs after a restart.
	must(t, m2, "zfs snapshot tank/k8s@s2")
	if a, b := getNum(t, m2, "createtxg", "tank/k8s@s1"), getNum(t, m2, "createtxg", "tank/k8s@s2"); b <= a {
		t.Errorf("createtxg went backwards: %d then %d", a, b)
	}
	// listsnapshots=on makes plain zfs list show snapshots.
	if got := must(t, m2, "zfs list -H -o name -r tank/k8s/vols/a"); got != "tank/k8s/vols/a\ntank/k8s/vols/a@s1\n" {
		t.Errorf("listsnapshots: %q", got)
	}
}

func TestOpenRejectsBrokenState(t *testing.T) {
	dir := t.TempDir()
	m, err := Open(Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create -p tank/a/b")
	guid := m.lookup("tank/a").guid
	m.Close()
	if err := os.Remove((&Model{dir: dir}).recordPath(guid)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{StateDir: dir}); err == nil || !strings.Contains(err.Error(), "parent") {
		t.Errorf("Open with an orphan: %v", err)
	}
	for _, o := range []Options{{}, {StateDir: t.TempDir(), Pools: []PoolSpec{{Name: "1bad", Size: 1}}},
		{StateDir: t.TempDir(), Pools: []PoolSpec{{Name: "tank"}}}} {
		if _, err := Open(o); err == nil {
			t.Errorf("Open(%+v) accepted", o)
		}
	}
}
