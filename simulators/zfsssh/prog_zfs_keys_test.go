package zfsssh

import (
	"testing"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// TestUnprivilegedLoadKey: a user without root (alice, no sudo) running
// zfs load-key or unload-key gets what OpenZFS's libzfs prints when the
// kernel refuses the ioctl ("Key load error: Permission denied."), after
// the checks zfs makes as the user (a key already loaded is said so
// first), and the key stays as it was. Other changes keep the generic
// refusal.
func TestUnprivilegedLoadKey(t *testing.T) {
	model, err := zfsmodel.Open(zfsmodel.Options{StateDir: t.TempDir(), Pools: []zfsmodel.PoolSpec{{Name: "tank", Size: 1 << 30}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	o := Options{Host: model, Users: defaultUsers()}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e := &testEnv{t: t, srv: srv, addr: addr.String(), opts: o}
	const pass = "correct horse battery staple\n"
	as := func(user, cmd, stdin string) result { return runOn(t, e.client(user), cmd, stdin, false) }

	if r := as("root", "zfs create -o encryption=on -o keyformat=passphrase tank/enc", pass); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	for _, c := range []struct {
		user, cmd, stdin string
		code             int
		stderr           string
	}{
		{"alice", "zfs load-key tank/enc", pass, 255, "Key load error: Key already loaded for 'tank/enc'.\n"},
		{"alice", "zfs unload-key tank/enc", "", 255, "Key unload error: Permission denied.\n"},
		{"root", "zfs unload-key tank/enc", "", 0, ""},
		{"alice", "zfs unload-key tank/enc", "", 255, "Key unload error: Key already unloaded for 'tank/enc'.\n"},
		{"alice", "zfs load-key tank/enc", pass, 255, "Key load error: Permission denied.\n"},
		{"alice", "zfs load-key tank", pass, 255, "Key load error: 'tank' is not encrypted.\n"},
		{"alice", "zfs change-key tank/enc", pass, 1, "cannot change-key 'tank/enc': permission denied\n"},
	} {
		r := as(c.user, c.cmd, c.stdin)
		if r.code != c.code || r.stderr != c.stderr {
			t.Errorf("%s: %s: exit %d stderr %q, want %d %q", c.user, c.cmd, r.code, r.stderr, c.code, c.stderr)
		}
	}
	if r := as("alice", "zfs get -H -o value keystatus tank/enc", ""); r.stdout != "unavailable\n" {
		t.Errorf("keystatus after the refused load: %q", r.stdout)
	}
	if r := as("root", "zfs load-key tank/enc", pass); r.code != 0 {
		t.Errorf("root load-key: %+v", r)
	}
}
