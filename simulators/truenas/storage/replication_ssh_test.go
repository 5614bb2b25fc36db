package storage

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// sshTarget serves peer's model over a real SSH endpoint accepting a new
// key; it returns the key pair and SSH credential ids made on src.
func sshTarget(t *testing.T, src, peer *env) (kp, cred int64) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	spub, _ := ssh.NewPublicKey(pub)
	blk, _ := ssh.MarshalPrivateKey(priv, "")
	srv, err := zfsssh.New(zfsssh.Options{Host: peer.m, StateDir: t.TempDir(),
		Users: map[string]zfsssh.User{"root": {AuthorizedKeys: []ssh.PublicKey{spub}}}})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	host, ps, _ := strings.Cut(addr.String(), ":")
	port, _ := strconv.Atoi(ps)
	k := src.must("keychaincredential.create", map[string]any{"name": "key", "type": "SSH_KEY_PAIR",
		"attributes": map[string]any{"private_key": string(pem.EncodeToMemory(blk))}})
	kp = int64(at(t, k, "id").(float64))
	c := src.must("keychaincredential.create", map[string]any{"name": "peer", "type": "SSH_CREDENTIALS",
		"attributes": map[string]any{"host": host, "port": port, "private_key": kp,
			"remote_host_key": "[" + host + "]:" + ps + " " + string(ssh.MarshalAuthorizedKey(srv.HostKey()))}})
	return kp, int64(at(t, c, "id").(float64))
}

func sshOnetime(src, dst, regex string, cred int64) map[string]any {
	b := onetime(src, dst, regex)
	b["transport"], b["ssh_credentials"] = "SSH", cred
	return b
}

// run_onetime over SSH copies into the other system's model, and a later
// run sends only the increment.
func TestReplicationOverSSHCopiesToThePeer(t *testing.T) {
	for _, v := range []string{"24.10", "26.04"} {
		t.Run(v, func(t *testing.T) {
			a, b := newEnv(t, v), newEnv(t, v)
			_, cred := sshTarget(t, a, b)
			ns := a.snapNS()
			a.mkfs("tank/vols/pvc-1", map[string]any{"create_ancestors": true})
			b.mkfs("tank/in", nil)
			dir, _ := a.m.HostPath("/tank/vols/pvc-1")
			if err := os.WriteFile(filepath.Join(dir, "data"), []byte("over ssh"), 0o600); err != nil {
				t.Fatal(err)
			}
			a.must(ns+".create", map[string]any{"dataset": "tank/vols/pvc-1", "name": "s1"})
			body := sshOnetime("tank/vols/pvc-1", "tank/in/copy", "^s[0-9]$", cred)
			body["only_from_scratch"] = false
			a.must("replication.run_onetime", body)
			got, ok := b.m.HostPath("/tank/in/copy")
			if !ok {
				t.Fatal("the copy is not mounted on the peer")
			}
			if d, err := os.ReadFile(filepath.Join(got, "data")); err != nil || string(d) != "over ssh" {
				t.Fatalf("copied %q %v", d, err)
			}
			if a.m.Exists("tank/in/copy") {
				t.Fatal("the copy was made on the source system")
			}
			a.must(ns+".create", map[string]any{"dataset": "tank/vols/pvc-1", "name": "s2"})
			a.must("replication.run_onetime", body)
			if !b.m.Exists("tank/in/copy@s2") {
				t.Fatal("the incremental run did not bring s2")
			}
		})
	}
}

// The credential is checked as keychaincredential.get_of_type does.
func TestReplicationOverSSHCredentialErrors(t *testing.T) {
	a, b := newEnv(t, "25.04"), newEnv(t, "25.04")
	kp, cred := sshTarget(t, a, b)
	a.mkfs("tank/a", nil)
	_, err := a.call("replication.run_onetime", sshOnetime("tank/a", "tank/b", "^s$", 99))
	wantValidation(t, err, "replication_run_onetime.ssh_credentials", "Credential does not exist")
	_, err = a.call("replication.run_onetime", sshOnetime("tank/a", "tank/b", "^s$", kp))
	wantValidation(t, err, "replication_run_onetime.ssh_credentials", "Credential is not of type SSH_CREDENTIALS")
	_, err = a.call("keychaincredential.create", map[string]any{"name": "peer", "type": "SSH_KEY_PAIR", "attributes": map[string]any{"public_key": "x"}})
	wantValidation(t, err, "keychain_credential_create.name", "already exists")
	_, err = a.call("keychaincredential.create", map[string]any{"name": "c2", "type": "SSH_CREDENTIALS",
		"attributes": map[string]any{"host": "h", "private_key": 77, "remote_host_key": "k"}})
	wantValidation(t, err, "keychain_credential_create.attributes.private_key", "Credential does not exist")
	// a host key that is not the peer's: the login is refused
	rows := a.must("keychaincredential.query", []any{[]any{"id", "=", cred}})
	list, _ := rows.([]any)
	if len(list) != 1 {
		t.Fatalf("query of credential %d: %v", cred, rows)
	}
	attrs := at(t, list[0], "attributes").(map[string]any)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	sig, _ := ssh.NewSignerFromKey(other)
	a.must("keychaincredential.create", map[string]any{"name": "wrong-host", "type": "SSH_CREDENTIALS",
		"attributes": map[string]any{"host": attrs["host"], "port": attrs["port"], "private_key": kp,
			"remote_host_key": string(ssh.MarshalAuthorizedKey(sig.PublicKey()))}})
	a.must(a.snapNS()+".create", map[string]any{"dataset": "tank/a", "name": "s"})
	_, err = a.call("replication.run_onetime", sshOnetime("tank/a", "tank/b", "^s$", cred+1))
	wantCallError(t, err, middleware.EFAULT, "is not the remote_host_key of the credential")
	if b.m.Exists("tank/b") {
		t.Fatal("something was received after a refused login")
	}
}
