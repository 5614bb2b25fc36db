package zfsssh

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestNewValidatesOptions(t *testing.T) {
	host := newFakeHost(t)
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"no host", Options{Users: defaultUsers()}, "Options.Host is required"},
		{"no users", Options{Host: host}, "Options.Users is empty"},
		{"user without credentials", Options{Host: host, Users: map[string]User{"x": {}}}, `user "x" has neither a password nor an authorized key`},
		{"unknown command in Paths", Options{Host: host, Users: defaultUsers(), Paths: map[string]string{"/usr/bin/rm": "rm"}}, `Options.Paths["/usr/bin/rm"] = "rm": no such command`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	good, bad := testKey(t), testKey(t)
	e := startEnv(t, func(o *Options) {
		o.Users["keyuser"] = User{AuthorizedKeys: []ssh.PublicKey{good.PublicKey()}}
	})
	cases := []struct {
		name string
		user string
		auth ssh.AuthMethod
		ok   bool
	}{
		{"password", "root", ssh.Password(rootPW), true},
		{"wrong password", "root", ssh.Password("nope"), false},
		{"unknown user", "mallory", ssh.Password(rootPW), false},
		{"empty password", "alice", ssh.Password(""), false},
		{"key", "keyuser", ssh.PublicKeys(good), true},
		{"wrong key", "keyuser", ssh.PublicKeys(bad), false},
		{"key for a password-only user", "root", ssh.PublicKeys(good), false},
		{"password for a key-only user", "keyuser", ssh.Password(""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := e.srv.Stats().AuthFailures
			c, err := e.dial(tc.user, tc.auth)
			if tc.ok {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				defer c.Close()
				if r := runOn(t, c, "whoami", "", false); strings.TrimSpace(r.stdout) != tc.user {
					t.Fatalf("whoami = %q, want %q", r.stdout, tc.user)
				}
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded, want an authentication failure")
			}
			if !strings.Contains(err.Error(), "unable to authenticate") {
				t.Fatalf("dial error = %v, want an SSH authentication failure", err)
			}
			if e.srv.Stats().AuthFailures <= before {
				t.Fatal("AuthFailures did not increase")
			}
		})
	}
}

func TestSessionLimit(t *testing.T) {
	e := startEnv(t, nil) // MaxSessions defaults to 10
	c := e.client("root")
	var open []*ssh.Session
	for i := range 10 {
		s, err := c.NewSession()
		if err != nil {
			t.Fatalf("session %d: %v", i+1, err)
		}
		open = append(open, s)
	}
	_, err := c.NewSession()
	var oce *ssh.OpenChannelError
	if !errors.As(err, &oce) || oce.Reason != ssh.Prohibited || oce.Message != "open failed" {
		t.Fatalf("11th session: err = %v, want administratively prohibited: open failed", err)
	}
	if got := e.srv.Stats().SessionsRejected; got != 1 {
		t.Fatalf("SessionsRejected = %d, want 1", got)
	}
	if got := e.srv.Stats().MaxSessionsInUse; got != 10 {
		t.Fatalf("MaxSessionsInUse = %d, want 10", got)
	}
	// A session that finished frees its slot before the client sees it end.
	if err := open[0].Run("true"); err != nil {
		t.Fatalf("run on an open session: %v", err)
	}
	s, err := c.NewSession()
	if err != nil {
		t.Fatalf("session after one finished: %v", err)
	}
	s.Close()
	// Another connection has its own ten.
	if r := runOn(t, e.client("root"), "echo ok", "", false); r.stdout != "ok\n" {
		t.Fatalf("second connection: %+v", r)
	}
	for _, s := range open[1:] {
		s.Close()
	}
}

func TestMaxSessionsOption(t *testing.T) {
	e := startEnv(t, func(o *Options) { o.MaxSessions = 2 })
	c := e.client("root")
	a, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := c.NewSession(); err == nil {
		t.Fatal("third session opened with MaxSessions 2")
	}
}

func TestExecStatusAndStreams(t *testing.T) {
	e := startEnv(t, nil)
	cases := []struct {
		cmd            string
		stdout, stderr string
		code           int
	}{
		{"true", "", "", 0},
		{"false", "", "", 1},
		{"exit 3", "", "", 3},
		{"echo hi", "hi\n", "", 0},
		{"echo $0", "sh\n", "", 0},
		{"false; echo $?", "1\n", "", 0},
		{"nosuch arg", "", "sh: 1: nosuch: not found\n", 127},
		{"/usr/bin/nosuch", "", "sh: 1: /usr/bin/nosuch: not found\n", 127},
		{"echo a\nnosuch", "a\n", "sh: 2: nosuch: not found\n", 127},
		{"nosuch 2>&1", "sh: 1: nosuch: not found\n", "", 127},
		{"echo out; echo err 1>&2", "out\n", "err\n", 0},
		{"echo hidden >/dev/null", "", "", 0},
		{"! false", "", "", 0},
		{"/usr/sbin/zpool list", "tank\n", "", 0},
		{"zfs bogus", "", "unrecognized command 'bogus'\n", 2},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			r := e.run(tc.cmd)
			if r.err != nil || r.stdout != tc.stdout || r.stderr != tc.stderr || r.code != tc.code {
				t.Fatalf("run(%q) = %+v, want stdout %q stderr %q code %d", tc.cmd, r, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
}

func TestExecWithPTY(t *testing.T) {
	e := startEnv(t, nil)
	r := runOn(t, e.client("root"), "echo a; nosuch", "", true)
	// A terminal merges stderr into stdout and turns \n into \r\n.
	if r.stdout != "a\r\nsh: 1: nosuch: not found\r\n" || r.stderr != "" || r.code != 127 {
		t.Fatalf("pty run = %+v", r)
	}
}

func TestKeepalive(t *testing.T) {
	e := startEnv(t, nil)
	c := e.client("root")
	ok, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
	if err != nil {
		t.Fatalf("keepalive: %v", err)
	}
	// OpenSSH answers requests it does not implement with a failure.
	if ok {
		t.Fatal("keepalive answered with success, OpenSSH answers failure")
	}
	if got := e.srv.Stats().Keepalives; got != 1 {
		t.Fatalf("Keepalives = %d, want 1", got)
	}
}

func TestInteractiveShell(t *testing.T) {
	e := startEnv(t, nil)
	t.Run("pty", func(t *testing.T) {
		s, err := e.client("alice").NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.RequestPty("xterm", 40, 80, ssh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		in, _ := s.StdinPipe()
		outPipe, _ := s.StdoutPipe()
		out := bufio.NewReader(outPipe)
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		readUntil(t, out, "$ ")
		in.Write([]byte("echo 'one\r"))           // an open quote asks for more
		readUntil(t, out, "> ")                   // PS2
		in.Write([]byte("two'\r"))                // ...
		got := readUntil(t, out, "$ ")            // the output, then the prompt again
		if !strings.Contains(got, "one\r\ntwo") { // echo of input plus the command's output
			t.Fatalf("output %q lacks the two-line argument", got)
		}
		in.Write([]byte("whoamx\x7fi\r")) // DEL erases the x
		if got := readUntil(t, out, "$ "); !strings.Contains(got, "alice\r\n") {
			t.Fatalf("whoami after erase: %q", got)
		}
		in.Write([]byte("exit 5\r"))
		var ee *ssh.ExitError
		if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 5 {
			t.Fatalf("Wait = %v, want exit status 5", err)
		}
	})
	t.Run("no pty", func(t *testing.T) {
		s, err := e.client("root").NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out strings.Builder
		s.Stdout = &out
		s.Stdin = strings.NewReader("echo a\nfalse\nexit 4\necho never\n")
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		var ee *ssh.ExitError
		if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 4 {
			t.Fatalf("Wait = %v, want exit status 4", err)
		}
		if out.String() != "a\n" {
			t.Fatalf("stdout = %q, want no prompts, just a\\n", out.String())
		}
	})
}

// A signal request ends the command for a non-root login; a root login's
// is ignored, as OpenSSH's sshd does (session.go).
func TestSignalEndsCommand(t *testing.T) {
	e := startEnv(t, nil)
	root, err := e.client("root").NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.Start("sleep 0.3"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := root.Signal(ssh.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := root.Wait(); err != nil {
		t.Fatalf("root's command: %v, want it to run to its end (exit 0)", err)
	}
	s, err := e.client("alice").NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.Signal(ssh.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err := <-done:
		var ee *ssh.ExitError
		if !errors.As(err, &ee) || ee.Signal() != "TERM" {
			t.Fatalf("Wait = %v, want exit-signal TERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sleep kept running after SIGTERM")
	}
}

func TestCloseDropsConnections(t *testing.T) {
	e := startEnv(t, nil)
	s, err := e.client("root").NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- e.srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while a command was running")
	}
	if err := <-done; err == nil {
		t.Fatal("the session ended cleanly, want a lost connection")
	}
	if _, err := e.dial("root", ssh.Password(rootPW)); err == nil {
		t.Fatal("dial succeeded after Close")
	}
}

func TestChannelRequestsRefused(t *testing.T) {
	e := startEnv(t, nil)
	c := e.client("root")
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Fatal("sftp subsystem accepted, the simulator has none")
	}
	if _, _, err := c.OpenChannel("direct-tcpip", nil); err == nil {
		t.Fatal("direct-tcpip channel accepted")
	}
}

func TestServeReturnsAfterClose(t *testing.T) {
	srv, err := New(Options{Host: newFakeHost(t), Users: defaultUsers()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	for srv.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	if srv.Addr().String() != l.Addr().String() {
		t.Fatalf("Addr = %v, want %v", srv.Addr(), l.Addr())
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrServerClosed) {
			t.Fatalf("Serve = %v, want ErrServerClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	if _, err := srv.Start("127.0.0.1:0"); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

// A host restarted on its state directory keeps its host key (clients
// that pinned it, or trusted it on first use, reconnect); a saved key is
// used over the process's own.
func TestHostKeyPersistsInStateDir(t *testing.T) {
	dir := t.TempDir()
	host := newFakeHost(t)
	key := func(stateDir string) string {
		srv, err := New(Options{Host: host, Users: defaultUsers(), StateDir: stateDir})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		defer srv.Close()
		return string(srv.HostKey().Marshal())
	}
	first, again := key(dir), key(dir)
	if first != again {
		t.Error("a server restarted on the same state directory presents another host key")
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, hostKeyFile), []byte(savedKeyPEM(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	if saved := key(other); saved == first {
		t.Error("the key saved in a state directory was not used")
	} else if key(other) != saved {
		t.Error("a saved key is not stable")
	}
	if _, err := os.Stat(filepath.Join(dir, hostKeyFile)); err != nil {
		t.Errorf("host key not saved: %v", err)
	}
}

// savedKeyPEM is an OpenSSH private key file of a fresh ed25519 key.
func savedKeyPEM(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}
