package zfsmodel

import (
	"path/filepath"
	"testing"
)

func TestHostPathAndZvolPath(t *testing.T) {
	m, dir := newModel(t, 1<<30)
	for _, l := range []string{
		"zfs create -p tank/k8s/vols/pvc-1", "zfs create -o mountpoint=/srv/share tank/share",
		"zfs create tank/share/sub", "zfs create -o mountpoint=none tank/hidden", "zfs create tank/hidden/kid",
		"zfs create -o mountpoint=legacy tank/legacy", "zfs create -o canmount=off tank/off",
		"zfs create -V 4M tank/k8s/vols/pvc-2", "zfs snapshot tank/k8s/vols/pvc-2@s",
	} {
		must(t, m, l)
	}
	mnt := func(ds, rel string) string { return filepath.Join(dir, "mnt", ds, rel) }
	hostCases := []struct {
		path string
		want string // "" = not found
	}{
		{"/tank", mnt("tank", "")},
		{"/tank/k8s/vols/pvc-1", mnt("tank/k8s/vols/pvc-1", "")},
		{"/tank/k8s/vols/pvc-1/sub/dir", mnt("tank/k8s/vols/pvc-1", "sub/dir")},
		{"/tank/k8s/vols/pvc-1/./x//y", mnt("tank/k8s/vols/pvc-1", "x/y")},
		{"/srv/share", mnt("tank/share", "")},
		{"/srv/share/sub/f", mnt("tank/share/sub", "f")},
		{"/srv/share/../../etc", ""},
		{"/tank/hidden", mnt("tank", "hidden")}, // not mounted: the pool's directory shows through
		{"/tank/legacy", mnt("tank", "legacy")},
		{"/elsewhere", ""},
		{"relative/path", ""},
		{"", ""},
	}
	for _, c := range hostCases {
		got, ok := m.HostPath(c.path)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("HostPath(%q) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
	zvolCases := []struct {
		ds string
		ok bool
	}{{"tank/k8s/vols/pvc-2", true}, {"tank/k8s/vols/pvc-1", false}, {"tank/k8s/vols/pvc-2@s", false}, {"tank/nope", false}}
	for _, c := range zvolCases {
		p, ok := m.ZvolPath(c.ds)
		if ok != c.ok || ok && filepath.Dir(p) != filepath.Join(dir, "zvols") {
			t.Errorf("ZvolPath(%q) = %q, %v", c.ds, p, ok)
		}
	}
	// zfs list accepts a path inside a mounted filesystem.
	if got := must(t, m, "zfs list -H -o name /srv/share/sub"); got != "tank/share/sub\n" {
		t.Errorf("list by path: %q", got)
	}
	if r := sh(m, "zfs list /nowhere"); r.code != 1 || r.stderr != "'/nowhere': not a ZFS filesystem\n" {
		t.Errorf("list by a foreign path: %+v", r)
	}
	// Changing the mountpoint moves the mapping, not the data.
	must(t, m, "zfs set mountpoint=/new tank/share")
	if got, ok := m.HostPath("/new/sub"); !ok || got != mnt("tank/share/sub", "") {
		t.Errorf("after set mountpoint: %q %v", got, ok)
	}
	if got, ok := m.HostPath("/srv/share"); ok {
		t.Errorf("old mountpoint still maps to %q", got)
	}
}
