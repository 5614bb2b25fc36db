package zfsmodel

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func getNum(t *testing.T, m *Model, prop, ds string) int64 {
	t.Helper()
	out := strings.TrimSpace(must(t, m, "zfs get -Hp -o value "+prop+" "+ds))
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		t.Fatalf("%s of %s: %q", prop, ds, out)
	}
	return n
}

func TestThickVolumesFillThePool(t *testing.T) {
	m, _ := newModel(t, 100<<20)
	must(t, m, "zfs create -V 40M tank/v1")
	must(t, m, "zfs create -V 40M tank/v2")
	r := sh(m, "zfs create -V 40M tank/v3")
	if r.code != 1 || r.stderr != "cannot create 'tank/v3': out of space\n" {
		t.Fatalf("third thick volume: %d %q", r.code, r.stderr)
	}
	must(t, m, "zfs create -s -V 1G tank/sparse") // sparse volumes reserve nothing
	must(t, m, "zfs create -o refreservation=0 -V 40M tank/thin")
	if got := getNum(t, m, "refreservation", "tank/v1"); got != zvolReservation(40<<20, 16384, 1) {
		t.Errorf("refreservation %d", got)
	}
	if got := getNum(t, m, "usedbyrefreservation", "tank/v1"); got != zvolReservation(40<<20, 16384, 1) {
		t.Errorf("usedbyrefreservation %d", got)
	}
	// Growing a thick volume grows its reservation; beyond the pool it fails.
	r = sh(m, "zfs set volsize=80M tank/v1")
	if r.code != 1 || r.stderr != "cannot set property for 'tank/v1': size is greater than available space\n" {
		t.Errorf("grow beyond space: %d %q", r.code, r.stderr)
	}
	must(t, m, "zfs set volsize=48M tank/v1")
	if got := getNum(t, m, "refreservation", "tank/v1"); got != zvolReservation(48<<20, 16384, 1) {
		t.Errorf("refreservation after grow %d", got)
	}
	zv, _ := m.ZvolPath("tank/v1")
	if st, err := os.Stat(zv); err != nil || st.Size() != 48<<20 {
		t.Errorf("zvol file after grow: %v %v", st, err)
	}
	must(t, m, "zfs set volsize=32M tank/v1") // zfs allows shrinking
	if st, _ := os.Stat(zv); st.Size() != 32<<20 {
		t.Errorf("zvol file after shrink: %d", st.Size())
	}
	// A snapshot of a thick volume needs room to keep its reservation.
	must(t, m, "zfs snapshot tank/v2@s")
}

func TestWritesFillThePool(t *testing.T) {
	m, _ := newModel(t, 8<<20)
	must(t, m, "zfs create tank/a")
	before := getNum(t, m, "available", "tank")
	writeFile(t, m, "/tank/a/big", strings.Repeat("x", 5<<20))
	after := getNum(t, m, "available", "tank")
	if d := before - after; d < 5<<20 || d > 5<<20+64<<10 {
		t.Errorf("avail dropped by %d after a 5M write", d)
	}
	if got := getNum(t, m, "referenced", "tank/a"); got < 5<<20 {
		t.Errorf("referenced %d", got)
	}
	must(t, m, "zfs create tank/b")
	writeFile(t, m, "/tank/b/big", strings.Repeat("y", 3<<20))
	r := sh(m, "zfs create tank/c")
	if r.code != 1 || r.stderr != "cannot create 'tank/c': out of space\n" {
		t.Errorf("create in a full pool: %d %q", r.code, r.stderr)
	}
	if got := getNum(t, m, "available", "tank/a"); got != 0 {
		t.Errorf("avail of a full pool: %d", got)
	}
	if out := must(t, m, "zpool list -H -o capacity,free tank"); out != "100%\t0\n" { // writes cannot overfill a real pool
		t.Errorf("capacity %q", out)
	}
}

func TestQuotasAndReservations(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -o refquota=10M tank/a")
	if got := getNum(t, m, "available", "tank/a"); got != 10<<20-fsBase {
		t.Errorf("avail under refquota: %d", got)
	}
	must(t, m, "zfs create -o quota=20M tank/q")
	must(t, m, "zfs create tank/q/c")
	if got := getNum(t, m, "available", "tank/q/c"); got != 20<<20-2*fsBase {
		t.Errorf("avail under the parent's quota: %d", got)
	}
	must(t, m, "zfs create tank/r")
	must(t, m, "zfs set reservation=100M tank/r")
	if got := getNum(t, m, "used", "tank"); got < 100<<20 {
		t.Errorf("reservation not charged to the parent: used %d", got)
	}
	if got := getNum(t, m, "available", "tank/r"); got != 1<<30-getNum(t, m, "used", "tank")+100<<20-getNum(t, m, "used", "tank/r") {
		t.Errorf("reserved dataset's avail: %d", got)
	}
	r := sh(m, "zfs set refquota=1K tank/a")
	if r.code != 1 || r.stderr != "cannot set property for 'tank/a': size is less than current used or reserved space\n" {
		t.Errorf("refquota below referenced: %d %q", r.code, r.stderr)
	}
	r = sh(m, "zfs set refreservation=2G tank/a")
	if r.code != 1 || r.stderr != "cannot set property for 'tank/a': size is greater than available space\n" {
		t.Errorf("refreservation above the pool: %d %q", r.code, r.stderr)
	}
}

func TestVolsizeAlignment(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -V 1000 tank/v") // the command rounds up to volblocksize
	if got := getNum(t, m, "volsize", "tank/v"); got != 16384 {
		t.Errorf("rounded volsize %d", got)
	}
	must(t, m, "zfs create -b 8K -V 100K tank/v8")
	if got := getNum(t, m, "volsize", "tank/v8"); got != 104<<10 {
		t.Errorf("volsize with -b 8K: %d", got)
	}
	if got := getOne(t, m, "volblocksize", "tank/v8"); got != "8K\t-" {
		t.Errorf("volblocksize: %q", got)
	}
	err := m.Create("tank/api", Volume, nil, CreateOptions{Volsize: 1000})
	if KindOf(err) != KindInvalid || err.Error() != "cannot create 'tank/api': volume size must be a multiple of volume block size" {
		t.Errorf("API unaligned volsize: %v", err)
	}
	err = m.SetProperty("tank/v", "volsize", "20000")
	if KindOf(err) != KindInvalid || err.Error() != "cannot set property for 'tank/v': 'volsize' must be a multiple of volume block size (16K)" {
		t.Errorf("API set volsize: %v", err)
	}
}

func TestVolumeSpaceFromBlocks(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	must(t, m, "zfs create -s -V 64M tank/v")
	if got := getNum(t, m, "referenced", "tank/v"); got != 0 {
		t.Errorf("empty sparse zvol refers %d", got)
	}
	zv, _ := m.ZvolPath("tank/v")
	f, _ := os.OpenFile(zv, os.O_WRONLY, 0)
	f.WriteAt(make([]byte, 1<<20), 32<<20)
	f.WriteAt([]byte{1}, 32<<20)
	f.Close()
	if got := getNum(t, m, "referenced", "tank/v"); got < 1<<20 || got > 1<<20+8192 {
		t.Errorf("referenced after a 1M write: %d", got)
	}
	if got := getNum(t, m, "used", "tank/v"); got != getNum(t, m, "referenced", "tank/v") {
		t.Errorf("used %d != referenced", got)
	}
}

// TestIncrementalSums checks the incrementally kept sums against a full
// rescan after a mix of operations.
func TestIncrementalSums(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	for _, l := range []string{
		"zfs create -p tank/a/b/c", "zfs create -V 10M tank/a/v", "zfs set reservation=5M tank/a/b",
		"zfs snapshot -r tank/a@s", "zfs clone tank/a/b@s tank/cl", "zfs rename tank/a/b/c tank/c2",
		"zfs set refreservation=3M tank/c2", "zfs promote tank/cl", "zfs destroy -r tank/a/v",
		"zfs create -s -V 1G tank/cl/v",
	} {
		must(t, m, l)
	}
	writeFile(t, m, "/tank/a/f", strings.Repeat("z", 100000))
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, p := range m.pools {
		var want []int64
		walk(p.root, func(d *dataset) { m.refresh(d) })
		walk(p.root, func(d *dataset) { want = append(want, d.sp.kids, d.sp.chg) })
		m.spaceMu.Lock()
		m.rescanLocked()
		var got []int64
		walk(p.root, func(d *dataset) { got = append(got, d.sp.kids, d.sp.chg) })
		m.spaceMu.Unlock()
		if len(got) != len(want) {
			t.Fatalf("walks differ")
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("incremental sums drifted: %v vs rescan %v", want, got)
			}
		}
	}
}
