package zfsmodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	testPass = "correct horse battery staple"
	testHex  = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	testRaw  = "0123456789abcdef0123456789ABCDEF" // 32 bytes
)

// runIn runs a zfs command line with stdin.
func runIn(m *Model, stdin string, line string) result {
	return run(m, strings.NewReader(stdin), strings.Fields(line)...)
}

func mustIn(t *testing.T, m *Model, stdin, line string) string {
	t.Helper()
	r := runIn(m, stdin, line)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// wantErr runs line and checks its exit code and exact stderr.
func wantErr(t *testing.T, m *Model, stdin, line string, code int, stderr string) {
	t.Helper()
	r := runIn(m, stdin, line)
	if r.code != code || r.stderr != stderr {
		t.Errorf("%s:\n got exit %d, stderr %q\nwant exit %d, stderr %q", line, r.code, r.stderr, code, stderr)
	}
}

// cryptProps is `zfs get -H -o name,property,value,source` of the
// encryption properties.
func cryptProps(t *testing.T, m *Model, ds string) string {
	t.Helper()
	return must(t, m, "zfs get -H -o name,property,value,source encryption,keylocation,keyformat,pbkdf2iters,encryptionroot,keystatus "+ds)
}

func newEncrypted(t *testing.T) *Model {
	t.Helper()
	m, _ := newModel(t, 1<<30)
	mustIn(t, m, testPass+"\n", "zfs create -o encryption=on -o keyformat=passphrase -o keylocation=prompt tank/enc")
	return m
}

// TestEncryptionProperties: what zfs get shows for an encryption root, a
// child, a snapshot, a clone and an unencrypted dataset (OpenZFS 2.2: the
// suite, format and root have no source; keylocation is local on the root
// only; keystatus and encryptionroot are "-" without encryption).
func TestEncryptionProperties(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs create tank/enc/child")
	must(t, m, "zfs snapshot tank/enc/child@s")
	must(t, m, "zfs clone tank/enc/child@s tank/clone")
	must(t, m, "zfs create tank/plain")
	want := map[string]string{
		"tank/enc": "tank/enc\tencryption\taes-256-gcm\t-\ntank/enc\tkeylocation\tprompt\tlocal\n" +
			"tank/enc\tkeyformat\tpassphrase\t-\ntank/enc\tpbkdf2iters\t350000\t-\n" +
			"tank/enc\tencryptionroot\ttank/enc\t-\ntank/enc\tkeystatus\tavailable\t-\n",
		"tank/enc/child": "tank/enc/child\tencryption\taes-256-gcm\t-\ntank/enc/child\tkeylocation\tnone\tdefault\n" +
			"tank/enc/child\tkeyformat\tpassphrase\t-\ntank/enc/child\tpbkdf2iters\t350000\t-\n" +
			"tank/enc/child\tencryptionroot\ttank/enc\t-\ntank/enc/child\tkeystatus\tavailable\t-\n",
		"tank/enc/child@s": "tank/enc/child@s\tencryption\taes-256-gcm\t-\ntank/enc/child@s\tkeylocation\t-\t-\n" +
			"tank/enc/child@s\tkeyformat\t-\t-\ntank/enc/child@s\tpbkdf2iters\t-\t-\n" +
			"tank/enc/child@s\tencryptionroot\ttank/enc\t-\ntank/enc/child@s\tkeystatus\tavailable\t-\n",
		"tank/clone": "tank/clone\tencryption\taes-256-gcm\t-\ntank/clone\tkeylocation\tnone\tdefault\n" +
			"tank/clone\tkeyformat\tpassphrase\t-\ntank/clone\tpbkdf2iters\t350000\t-\n" +
			"tank/clone\tencryptionroot\ttank/enc\t-\ntank/clone\tkeystatus\tavailable\t-\n",
		"tank/plain": "tank/plain\tencryption\toff\tdefault\ntank/plain\tkeylocation\tnone\tdefault\n" +
			"tank/plain\tkeyformat\tnone\tdefault\ntank/plain\tpbkdf2iters\t0\tdefault\n" +
			"tank/plain\tencryptionroot\t-\t-\ntank/plain\tkeystatus\t-\t-\n",
	}
	for ds, w := range want {
		if got := cryptProps(t, m, ds); got != w {
			t.Errorf("%s:\n got %q\nwant %q", ds, got, w)
		}
	}
	// zfs get all shows no encryptionroot/keystatus lines without encryption.
	all := must(t, m, "zfs get -H -o property all tank/plain")
	for _, p := range []string{"encryptionroot", "keystatus"} {
		if strings.Contains(all, p+"\n") {
			t.Errorf("zfs get all of an unencrypted dataset lists %s", p)
		}
	}
}

// TestEncryptionFormats: each keyformat and suite, files and volumes.
func TestEncryptionFormats(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	mustIn(t, m, testHex+"\n", "zfs create -o encryption=aes-128-ccm -o keyformat=hex tank/hex")
	mustIn(t, m, testRaw, "zfs create -V 1M -o encryption=aes-192-gcm -o keyformat=raw -o keylocation=prompt tank/raw")
	mustIn(t, m, testPass, "zfs create -o encryption=on -o keyformat=passphrase -o pbkdf2iters=100000 tank/iters")
	for ds, want := range map[string]string{
		"tank/hex":   "aes-128-ccm hex 0 prompt",
		"tank/raw":   "aes-192-gcm raw 0 prompt",
		"tank/iters": "aes-256-gcm passphrase 100000 prompt",
	} {
		got := strings.Join(strings.Fields(must(t, m, "zfs get -H -o value encryption,keyformat,pbkdf2iters,keylocation "+ds)), " ")
		if got != want {
			t.Errorf("%s: %q, want %q", ds, got, want)
		}
	}
	// A key file (keylocation=file://) on the simulated host: in one of
	// its mounted filesystems (crypt_keyfile_test.go has the rest).
	must(t, m, "zfs create tank/keys")
	dir, ok := m.HostPath("/tank/keys")
	if !ok {
		t.Fatal("no host path for /tank/keys")
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(testPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs create -o encryption=on -o keyformat=passphrase -o keylocation=file:///tank/keys/key tank/file")
	must(t, m, "zfs unload-key tank/file")
	must(t, m, "zfs load-key tank/file")
	wantErr(t, m, "", "zfs create -o encryption=on -o keyformat=passphrase -o keylocation=file:///nonexistent/key tank/nofile", 1,
		"cannot create 'tank/nofile': Failed to open key material file: No such file or directory\n")
}

// TestEncryptionCreateRefusals: libzfs's key rules and their exact texts;
// nothing is made.
func TestEncryptionCreateRefusals(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	const enc = "zfs create -o encryption=on "
	cases := []struct{ stdin, line, stderr string }{
		{"short77\n", enc + "-o keyformat=passphrase tank/x", "cannot create 'tank/x': Passphrase too short (min 8).\n"},
		{strings.Repeat("p", 513) + "\n", enc + "-o keyformat=passphrase tank/x", "cannot create 'tank/x': Passphrase too long (max 512).\n"},
		{"", enc + "-o keyformat=passphrase tank/x", "cannot create 'tank/x': Passphrase too short (min 8).\n"},
		{testHex[:63] + "\n", enc + "-o keyformat=hex tank/x", "cannot create 'tank/x': Hex key too short (expected 64).\n"},
		{testHex + "0\n", enc + "-o keyformat=hex tank/x", "cannot create 'tank/x': Hex key too long (expected 64).\n"},
		{"zz" + testHex[2:] + "\n", enc + "-o keyformat=hex tank/x", "cannot create 'tank/x': Invalid hex character detected.\n"},
		{testRaw[:31], enc + "-o keyformat=raw tank/x", "cannot create 'tank/x': Raw key too short (expected 32).\n"},
		{testRaw + "x", enc + "-o keyformat=raw tank/x", "cannot create 'tank/x': Raw key too long (expected 32).\n"},
		{testPass + "\n", enc + "tank/x", "cannot create 'tank/x': Keyformat required for new encryption root.\n"},
		{testPass + "\n", enc + "-o keylocation=prompt tank/x", "cannot create 'tank/x': Keyformat required for new encryption root.\n"},
		{testPass + "\n", "zfs create -o keyformat=passphrase tank/x", "cannot create 'tank/x': Encryption must be turned on to set encryption properties.\n"},
		{testHex + "\n", enc + "-o keyformat=hex -o pbkdf2iters=200000 tank/x", "cannot create 'tank/x': Cannot specify pbkdf2iters with a non-passphrase keyformat.\n"},
		{testPass + "\n", enc + "-o keyformat=passphrase -o pbkdf2iters=1000 tank/x", "cannot create 'tank/x': minimum pbkdf2 iterations is 100000\n"},
		{testPass + "\n", enc + "-o keyformat=passphrase -o keylocation=elsewhere tank/x", "cannot create 'tank/x': invalid keylocation\n"},
		{testPass + "\n", "zfs create -o encryption=aes-512-gcm -o keyformat=passphrase tank/x",
			"cannot create 'tank/x': 'encryption' must be one of 'on | off | aes-128-ccm | aes-192-ccm | aes-256-ccm | aes-128-gcm | aes-192-gcm | aes-256-gcm'\n"},
	}
	for _, c := range cases {
		wantErr(t, m, c.stdin, c.line, 1, c.stderr)
	}
	if out := must(t, m, "zfs list -H -o name -r tank"); out != "tank\n" {
		t.Errorf("datasets made by refused creates: %q", out)
	}
}

// TestEncryptionImmutable: the suite and format are fixed at creation;
// keylocation must agree with the dataset's encryption; a clone inherits.
func TestEncryptionImmutable(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs create tank/plain")
	must(t, m, "zfs snapshot tank/enc@s")
	wantErr(t, m, "", "zfs set encryption=off tank/enc", 1, "cannot set property for 'tank/enc': 'encryption' is readonly\n")
	wantErr(t, m, "", "zfs set keyformat=hex tank/enc", 1, "cannot set property for 'tank/enc': 'keyformat' is readonly\n")
	wantErr(t, m, "", "zfs set keylocation=none tank/enc", 1, "cannot set property for 'tank/enc': keylocation must not be 'none' for encrypted datasets\n")
	wantErr(t, m, "", "zfs set keylocation=prompt tank/plain", 1, "cannot set property for 'tank/plain': keylocation must be 'none' for unencrypted datasets\n")
	wantErr(t, m, "", "zfs set copies=3 tank/enc", 1, "cannot set property for 'tank/enc': encrypted datasets cannot have 3 copies\n")
	wantErr(t, m, "", "zfs clone -o encryption=off tank/enc@s tank/c", 1, "cannot create 'tank/c': Encryption properties must inherit from origin dataset.\n")
	wantErr(t, m, "", "zfs clone -o keylocation=prompt tank/enc@s tank/c", 1, "cannot create 'tank/c': Encryption properties must inherit from origin dataset.\n")
	must(t, m, "zfs create tank/enc/child")
	wantErr(t, m, "", "zfs rename tank/enc/child tank/moved", 1, "cannot rename 'tank/enc/child': cannot move encrypted child outside of its encryption root\n")
	must(t, m, "zfs create tank/enc/sub")
	must(t, m, "zfs rename tank/enc/child tank/enc/sub/child") // within its root
	must(t, m, "zfs rename tank/enc tank/enc2")                // a root moves anywhere
	if got := must(t, m, "zfs get -H -o value encryptionroot tank/enc2/sub/child"); got != "tank/enc2\n" {
		t.Errorf("encryption root after renames: %q", got)
	}
	must(t, m, "zfs rename tank/enc2 tank/enc")
	// An explicitly unencrypted child of an encrypted dataset is allowed.
	must(t, m, "zfs create -o encryption=off tank/enc/clear")
	if got := must(t, m, "zfs get -H -o value encryption tank/enc/clear"); got != "off\n" {
		t.Errorf("encryption=off child: %q", got)
	}
}

// TestKeyLoadUnload: an unloaded key makes the datasets unreadable
// (unmounted, no mount or share, no plain send, no new child or clone); a
// wrong key is refused with zfs's text; the right one restores them.
func TestKeyLoadUnload(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs create tank/enc/child")
	must(t, m, "zfs snapshot tank/enc@s")
	must(t, m, "zfs create tank/plain")
	must(t, m, "zfs unload-key tank/enc")
	for _, ds := range []string{"tank/enc", "tank/enc/child", "tank/enc@s"} {
		if got := must(t, m, "zfs get -H -o value keystatus "+ds); got != "unavailable\n" {
			t.Errorf("%s keystatus after unload-key: %q", ds, got)
		}
	}
	if got := must(t, m, "zfs get -H -o value mounted tank/enc tank/enc/child"); got != "no\nno\n" {
		t.Errorf("mounted after unload-key: %q", got)
	}
	wantErr(t, m, "", "zfs mount tank/enc", 1, "cannot mount 'tank/enc': encryption key not loaded\n")
	wantErr(t, m, "", "zfs share tank/enc/child", 1, "cannot share 'tank/enc/child': encryption key not loaded\n")
	wantErr(t, m, "", "zfs send tank/enc@s", 1, "warning: cannot send 'tank/enc@s': source key must be loaded\n")
	wantErr(t, m, "", "zfs create tank/enc/new", 1, "cannot create 'tank/enc/new': encryption root's key is not loaded or provided\n")
	wantErr(t, m, "", "zfs clone tank/enc@s tank/c", 1, "cannot create 'tank/c': permission denied\n")
	wantErr(t, m, "", "zfs unload-key tank/enc", 255, "Key unload error: Key already unloaded for 'tank/enc'.\n")
	wantErr(t, m, "", "zfs unload-key tank/plain", 255, "Key unload error: 'tank/plain' is not encrypted.\n")

	wantErr(t, m, "wrong horse battery staple\n", "zfs load-key tank/enc", 255, "Key load error: Incorrect key provided for 'tank/enc'.\n")
	wantErr(t, m, "wrong horse battery staple\n", "zfs load-key -L prompt tank/enc", 255, "Key load error: Incorrect key provided for 'tank/enc'.\n")
	wantErr(t, m, testPass+"\n", "zfs load-key tank/enc/child", 255, "Key load error: Keys must be loaded for encryption root of 'tank/enc/child' (tank/enc).\n")
	wantErr(t, m, testPass+"\n", "zfs load-key tank/plain", 255, "Key load error: 'tank/plain' is not encrypted.\n")
	if got := must(t, m, "zfs get -H -o value keystatus tank/enc"); got != "unavailable\n" {
		t.Errorf("keystatus after wrong keys: %q", got)
	}
	if out := mustIn(t, m, testPass+"\n", "zfs load-key -n tank/enc"); out != "1 / 1 key(s) successfully verified\n" {
		t.Errorf("load-key -n: %q", out)
	}
	if got := must(t, m, "zfs get -H -o value keystatus tank/enc"); got != "unavailable\n" {
		t.Errorf("load-key -n loaded the key: %q", got)
	}
	if out := mustIn(t, m, testPass+"\n", "zfs load-key -r tank"); out != "1 / 1 key(s) successfully loaded\n" {
		t.Errorf("load-key -r: %q", out)
	}
	if got := must(t, m, "zfs get -H -o value keystatus,mounted tank/enc/child"); got != "available\nyes\n" {
		t.Errorf("after load-key: %q", got)
	}
	wantErr(t, m, testPass+"\n", "zfs load-key tank/enc", 255, "Key load error: Key already loaded for 'tank/enc'.\n")
	wantErr(t, m, "", "zfs load-key", 2, "Missing dataset argument or -a option\n"+usageOf(t, m, "load-key"))

	// zfs mount -l loads the key from its keylocation (stdin: prompt).
	must(t, m, "zfs unload-key tank/enc")
	wantErr(t, m, "nope nope nope\n", "zfs mount -l tank/enc", 1, "Key load error: Incorrect key provided for 'tank/enc'.\n")
	mustIn(t, m, testPass+"\n", "zfs mount -l tank/enc")
	if got := must(t, m, "zfs get -H -o value mounted tank/enc"); got != "yes\n" {
		t.Errorf("after mount -l: %q", got)
	}
}

// usageOf is the usage text a subcommand prints on bad arguments.
func usageOf(t *testing.T, m *Model, sub string) string {
	t.Helper()
	return sh(m, "zfs "+sub+" --help").stderr
}

// TestKeyFormatsLoad: hex keys load in either case; raw keys exactly.
func TestKeyFormatsLoad(t *testing.T) {
	m, _ := newModel(t, 1<<30)
	mustIn(t, m, testHex+"\n", "zfs create -o encryption=on -o keyformat=hex tank/hex")
	mustIn(t, m, testRaw, "zfs create -o encryption=on -o keyformat=raw tank/raw")
	must(t, m, "zfs unload-key -r tank")
	mustIn(t, m, strings.ToUpper(testHex)+"\n", "zfs load-key tank/hex")
	wantErr(t, m, testRaw[:31], "zfs load-key tank/raw", 255, "Key load error: Raw key too short (expected 32).\n")
	wantErr(t, m, strings.Repeat("x", 32), "zfs load-key tank/raw", 255, "Key load error: Incorrect key provided for 'tank/raw'.\n")
	mustIn(t, m, testRaw, "zfs create -V 1M -o encryption=on -o keyformat=raw tank/vol")
	if _, ok := m.ZvolPath("tank/vol"); !ok {
		t.Error("no zvol device for an encrypted volume whose key is loaded")
	}
	must(t, m, "zfs unload-key tank/vol")
	if _, ok := m.ZvolPath("tank/vol"); ok {
		t.Error("a zvol device for a volume whose key is not loaded")
	}
	mustIn(t, m, testRaw, "zfs load-key tank/raw")
}

// TestKeyPersistence: the encryption state survives a restart of the model
// (as the dataset's other properties do); the keys do not (a restart is a
// reboot: every key is unloaded) and the key is stored nowhere.
func TestKeyPersistence(t *testing.T) {
	dir := t.TempDir()
	open := func() *Model {
		m, err := Open(Options{StateDir: dir, Pools: []PoolSpec{{Name: "tank", Size: 1 << 30}}, RescanInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	mustIn(t, m, testPass+"\n", "zfs create -o encryption=on -o keyformat=passphrase tank/enc")
	must(t, m, "zfs create tank/enc/child")
	for _, line := range []string{"zfs get all tank/enc", "zfs get -p all tank/enc", "zfs get all tank/enc/child", "zfs list -o all -r tank"} {
		if strings.Contains(must(t, m, line), testPass) {
			t.Errorf("%s shows the key", line)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open()
	defer m.Close()
	if got := cryptProps(t, m, "tank/enc/child"); !strings.Contains(got, "encryptionroot\ttank/enc") || !strings.Contains(got, "keystatus\tunavailable") {
		t.Errorf("after reopening:\n%s", got)
	}
	wantErr(t, m, "wrong horse battery staple\n", "zfs load-key tank/enc", 255, "Key load error: Incorrect key provided for 'tank/enc'.\n")
	mustIn(t, m, testPass+"\n", "zfs load-key tank/enc")
	if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), testPass) {
			t.Errorf("the key is stored in %s", p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestChangeKey: a new key and format; clones refused; a child made its
// own encryption root and back (-i).
func TestChangeKey(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs create tank/enc/child")
	must(t, m, "zfs snapshot tank/enc@s")
	must(t, m, "zfs clone tank/enc@s tank/enc/clone")
	mustIn(t, m, testHex+"\n", "zfs change-key -o keyformat=hex tank/enc")
	if got := must(t, m, "zfs get -H -o value keyformat,pbkdf2iters tank/enc/child"); got != "hex\n0\n" {
		t.Errorf("after change-key to hex: %q", got)
	}
	must(t, m, "zfs unload-key tank/enc")
	wantErr(t, m, testPass+"\n", "zfs load-key tank/enc", 255, "Key load error: Hex key too short (expected 64).\n")
	mustIn(t, m, testHex+"\n", "zfs load-key tank/enc")
	wantErr(t, m, testPass+"\n", "zfs change-key tank/enc/clone", 255, "Key change error: Keys cannot be changed on clones.\n")
	wantErr(t, m, testPass+"\n", "zfs change-key tank/enc/child", 255, "Key change error: Keyformat required for new encryption root.\n")
	wantErr(t, m, testPass+"\n", "zfs change-key -o compression=off tank/enc", 255, "Key change error: Only keyformat, keylocation and pbkdf2iters may be set with this command.\n")
	wantErr(t, m, "", "zfs change-key -i tank/enc", 255, "Key change error: Parent must be encrypted.\n")
	mustIn(t, m, testPass+"\n", "zfs change-key -o keyformat=passphrase tank/enc/child")
	if got := must(t, m, "zfs get -H -o value encryptionroot,keylocation tank/enc/child"); got != "tank/enc/child\nprompt\n" {
		t.Errorf("child after change-key: %q", got)
	}
	must(t, m, "zfs change-key -i tank/enc/child")
	if got := must(t, m, "zfs get -H -o value encryptionroot,keylocation,keyformat tank/enc/child"); got != "tank/enc\nnone\nhex\n" {
		t.Errorf("child after change-key -i: %q", got)
	}
	wantErr(t, m, "", "zfs change-key -i tank/enc/child", 255, "Key change error: Key inheritting can only be performed on encryption roots.\n")
	must(t, m, "zfs create tank/plain")
	wantErr(t, m, "", "zfs change-key tank/plain", 255, "Key change error: Dataset not encrypted.\n")
}

// TestEncryptedSendReceive: a plain stream of an encrypted snapshot is its
// decrypted data (received unencrypted, or under an encrypted parent with
// that parent's key); streams with properties need the raw flag.
func TestEncryptedSendReceive(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs snapshot tank/enc@s")
	must(t, m, "zfs create tank/plain")
	if err := os.WriteFile(filepath.Join(m.dir, "mnt", "tank", "enc", "f"), []byte("secret data"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, m, "zfs snapshot tank/enc@s2")
	wantErr(t, m, "", "zfs send -p tank/enc@s", 1, "cannot send tank/enc@s: encrypted dataset tank/enc may not be sent with properties without the raw flag\n")
	wantErr(t, m, "", "zfs send -R tank/enc@s", 1, "cannot send tank/enc@s: encrypted dataset tank/enc may not be sent with properties without the raw flag\n")
	stream := runIn(m, "", "zfs send tank/enc@s2")
	if stream.code != 0 {
		t.Fatalf("zfs send: %s", stream.stderr)
	}
	mustIn(t, m, stream.stdout, "zfs receive tank/plain/copy")
	if got := must(t, m, "zfs get -H -o value encryption,keystatus tank/plain/copy"); got != "off\n-\n" {
		t.Errorf("received under an unencrypted parent: %q", got)
	}
	mustIn(t, m, stream.stdout, "zfs receive tank/enc/copy")
	if got := must(t, m, "zfs get -H -o value encryption,encryptionroot tank/enc/copy"); got != "aes-256-gcm\ntank/enc\n" {
		t.Errorf("received under an encrypted parent: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(m.dir, "mnt", "tank", "plain", "copy", "f")); err != nil || string(b) != "secret data" {
		t.Errorf("received data: %q %v", b, err)
	}
	if r := runIn(m, "", "zfs send -w -R tank/enc@s"); r.code == 0 || !strings.Contains(r.stderr, "not modelled") {
		t.Errorf("zfs send -w -R of an encrypted dataset: exit %d %q", r.code, r.stderr)
	}
	must(t, m, "zfs unload-key tank/enc")
	wantErr(t, m, stream.stdout, "zfs receive tank/enc/again", 1, "cannot receive new filesystem stream: permission denied\n")

	// A raw stream needs no key, and what it makes is encrypted with the
	// sender's key, its own encryption root, the key not loaded.
	raw := runIn(m, "", "zfs send -w tank/enc@s2")
	if raw.code != 0 {
		t.Fatalf("zfs send -w with the key unloaded: %s", raw.stderr)
	}
	mustIn(t, m, raw.stdout, "zfs receive tank/plain/raw")
	if got := cryptProps(t, m, "tank/plain/raw"); got != "tank/plain/raw\tencryption\taes-256-gcm\t-\ntank/plain/raw\tkeylocation\tprompt\tlocal\n"+
		"tank/plain/raw\tkeyformat\tpassphrase\t-\ntank/plain/raw\tpbkdf2iters\t350000\t-\n"+
		"tank/plain/raw\tencryptionroot\ttank/plain/raw\t-\ntank/plain/raw\tkeystatus\tunavailable\t-\n" {
		t.Errorf("raw receive:\n%s", got)
	}
	if got := must(t, m, "zfs get -H -o value mounted tank/plain/raw"); got != "no\n" {
		t.Errorf("raw receive mounted without its key: %q", got)
	}
	wantErr(t, m, "wrong horse battery staple\n", "zfs load-key tank/plain/raw", 255, "Key load error: Incorrect key provided for 'tank/plain/raw'.\n")
	mustIn(t, m, testPass+"\n", "zfs load-key tank/plain/raw")
	if b, err := os.ReadFile(filepath.Join(m.dir, "mnt", "tank", "plain", "raw", "f")); err != nil || string(b) != "secret data" {
		t.Errorf("raw-received data: %q %v", b, err)
	}
	// No raw incremental onto an unencrypted dataset.
	must(t, m, "zfs destroy -r tank/plain/copy")
	mustIn(t, m, testPass+"\n", "zfs load-key tank/enc")
	full := runIn(m, "", "zfs send tank/enc@s")
	mustIn(t, m, full.stdout, "zfs receive tank/plain/copy")
	incr := runIn(m, "", "zfs send -w -i @s tank/enc@s2")
	if incr.code != 0 {
		t.Fatalf("zfs send -w -i: %s", incr.stderr)
	}
	wantErr(t, m, incr.stdout, "zfs receive tank/plain/copy", 1, "cannot receive incremental stream: cannot perform raw receive on top of existing unencrypted dataset\n")
	// A raw incremental onto the raw copy keeps it as it is.
	must(t, m, "zfs snapshot tank/enc@s3")
	next := runIn(m, "", "zfs send -w -i @s2 tank/enc@s3")
	mustIn(t, m, next.stdout, "zfs receive tank/plain/raw")
	if got := must(t, m, "zfs get -H -o value encryptionroot,keystatus tank/plain/raw@s3"); got != "tank/plain/raw\navailable\n" {
		t.Errorf("raw incremental: %q", got)
	}
	wantErr(t, m, full.stdout, "zfs receive -F tank/plain/raw", 1, "cannot receive new filesystem stream: zfs receive -F cannot be used to destroy an encrypted filesystem or overwrite an unencrypted one with an encrypted one\n")
}

// TestEncryptedPromote: promoting a clone of an encryption root moves the
// root (and its key) to the clone.
func TestEncryptedPromote(t *testing.T) {
	m := newEncrypted(t)
	must(t, m, "zfs snapshot tank/enc@s")
	must(t, m, "zfs clone tank/enc@s tank/clone")
	must(t, m, "zfs promote tank/clone")
	if got := must(t, m, "zfs get -H -o value encryptionroot,keylocation,keystatus tank/clone"); got != "tank/clone\nprompt\navailable\n" {
		t.Errorf("promoted clone: %q", got)
	}
	if got := must(t, m, "zfs get -H -o value encryptionroot,keylocation tank/enc"); got != "tank/clone\nnone\n" {
		t.Errorf("former origin: %q", got)
	}
	must(t, m, "zfs unload-key tank/clone")
	mustIn(t, m, testPass+"\n", "zfs load-key tank/clone")
}
