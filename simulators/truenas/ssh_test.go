package truenas

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
	"github.com/switchyard-csi/switchyard/simulators/zfsssh"
)

// TestSSHEndpoint: the SSH endpoint runs zfs on the same model the API
// serves, and reports a TrueNAS kernel.
func TestSSHEndpoint(t *testing.T) {
	s := startServer(t, "25.04", func(o *Options) { o.Hostname = "nas1" })
	addr, err := s.StartSSH("127.0.0.1:0", map[string]zfsssh.User{"root": {Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartSSH("127.0.0.1:0", map[string]zfsssh.User{"root": {Password: "pw"}}); err == nil {
		t.Error("a second SSH endpoint was started")
	}
	if err := s.Model().Create("tank/from-api", zfsmodel.Filesystem, nil, zfsmodel.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "root", Auth: []ssh.AuthMethod{ssh.Password("pw")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	run := func(cmd string) string {
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.CombinedOutput(cmd)
		if err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
		return string(out)
	}
	if out := run("zfs list -H -o name"); !strings.Contains(out, "tank/from-api\n") {
		t.Errorf("zfs list over SSH: %q", out)
	}
	run("zfs create tank/from-ssh")
	if _, err := s.Model().Get("tank/from-ssh"); err != nil {
		t.Errorf("a dataset made over SSH is not in the model: %v", err)
	}
	if out := run("uname -r"); !strings.Contains(out, "truenas") {
		t.Errorf("uname -r = %q", out)
	}
	if out := run("hostname 2>/dev/null || uname -n"); !strings.Contains(out, "nas1") {
		t.Errorf("host name %q", out)
	}
}
