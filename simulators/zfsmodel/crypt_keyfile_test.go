package zfsmodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyFileStaysOnTheSimulatedHost: keylocation=file:// is a file of the
// simulated host, found in its mounted filesystems. A file of the machine
// running the simulator (here a key file in a temporary directory, which
// a real path would name), a path that climbs out with "..", a symbolic
// link written into a share pointing out of it, and a file in a
// filesystem that is not mounted are all "No such file or directory", as
// zfs says for a file its host does not have; nothing is made and no key
// is loaded from them.
func TestKeyFileStaysOnTheSimulatedHost(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	outside := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(outside, []byte(testPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create tank/keys")
	dir, ok := m.HostPath("/tank/keys")
	if !ok {
		t.Fatal("no host path for /tank/keys")
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(testPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../../../../../.."+outside, filepath.Join(dir, "rel-link")); err != nil {
		t.Fatal(err)
	}
	const enc = "zfs create -o encryption=on -o keyformat=passphrase -o keylocation="
	const enoent = "Failed to open key material file: No such file or directory\n"
	for _, loc := range []string{
		"file://" + outside,
		"file:///tank/keys/../../.." + outside,
		"file:///tank/keys/link",
		"file:///tank/keys/rel-link",
		"file:///etc/passwd",
		"file:///tank/keys/missing",
	} {
		wantErr(t, m, "", enc+loc+" tank/x", 1, "cannot create 'tank/x': "+enoent)
	}
	if got := must(t, m, "zfs list -H -o name -r tank"); strings.Contains(got, "tank/x") {
		t.Errorf("a refused create made tank/x:\n%s", got)
	}

	// The key file in the share works, for create and for load-key; load-key -L
	// pointing outside is refused the same way and loads nothing.
	must(t, m, enc+"file:///tank/keys/key tank/enc")
	must(t, m, "zfs unload-key tank/enc")
	wantErr(t, m, "", "zfs load-key -L file://"+outside+" tank/enc", 255, "Key load error: "+enoent)
	if got := strings.TrimSpace(must(t, m, "zfs get -H -o value keystatus tank/enc")); got != "unavailable" {
		t.Errorf("keystatus after a refused key file: %q", got)
	}
	must(t, m, "zfs load-key tank/enc")

	// A filesystem that is not mounted holds no file the host can open.
	must(t, m, "zfs set mountpoint=none tank/keys")
	wantErr(t, m, "", enc+"file:///tank/keys/key tank/y", 1, "cannot create 'tank/y': "+enoent)
}
