package zfsssh

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// fakeHost is a tiny ZFS host for the server's tests: datasets in a map,
// filesystems backed by directories, zvols by files. Its send/receive
// insist on streaming: send waits, between two chunks, until receive has
// read the first, so a pipeline that buffers instead of streaming fails.
type fakeHost struct {
	dir string

	mu       sync.Mutex
	datasets map[string]string // name -> "filesystem" | "volume" | "snapshot"
	data     map[string][]byte // received streams
	calls    [][]string
	got      chan struct{} // receive read the first chunk
}

func newFakeHost(t *testing.T) *fakeHost {
	h := &fakeHost{dir: t.TempDir(), datasets: map[string]string{"tank": "filesystem"}, data: map[string][]byte{},
		got: make(chan struct{}, 1)}
	if err := os.MkdirAll(filepath.Join(h.dir, "mnt", "tank"), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *fakeHost) addFS(t *testing.T, name string) string {
	h.mu.Lock()
	h.datasets[name] = "filesystem"
	h.mu.Unlock()
	dir := filepath.Join(h.dir, "mnt", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (h *fakeHost) addZvol(t *testing.T, name string, size int64) {
	h.mu.Lock()
	h.datasets[name] = "volume"
	h.mu.Unlock()
	f := filepath.Join(h.dir, "zvols", strings.ReplaceAll(name, "/", "_"))
	os.MkdirAll(filepath.Dir(f), 0o755)
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f, size); err != nil {
		t.Fatal(err)
	}
}

func (h *fakeHost) has(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.datasets[name]
	return ok
}

func (h *fakeHost) callCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls)
}

func (h *fakeHost) ZFS(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	h.mu.Lock()
	h.calls = append(h.calls, append([]string{"zfs"}, args...))
	h.mu.Unlock()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "missing command")
		return 2
	}
	last := args[len(args)-1]
	switch args[0] {
	case "list":
		h.mu.Lock()
		var names []string
		for n := range h.datasets {
			names = append(names, n)
		}
		h.mu.Unlock()
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
		return 0
	case "create":
		typ := "filesystem"
		for _, a := range args {
			if a == "-V" {
				typ = "volume"
			}
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.datasets[last]; ok {
			fmt.Fprintf(stderr, "cannot create '%s': dataset already exists\n", last)
			return 1
		}
		h.datasets[last] = typ
		return 0
	case "set":
		return 0
	case "send":
		// Two chunks; the second only after receive has read the first.
		if _, err := stdout.Write(bytes.Repeat([]byte("a"), 1000)); err != nil {
			return 1
		}
		select {
		case <-h.got:
		case <-time.After(5 * time.Second):
			fmt.Fprintln(stderr, "send: receive never read the first chunk (not streaming)")
			return 1
		}
		if _, err := stdout.Write(bytes.Repeat([]byte("b"), 1000)); err != nil {
			return 1
		}
		return 0
	case "receive", "recv":
		buf := make([]byte, 1000)
		if _, err := io.ReadFull(stdin, buf); err != nil {
			fmt.Fprintln(stderr, "cannot receive: short stream")
			return 1
		}
		h.got <- struct{}{}
		rest, _ := io.ReadAll(stdin)
		h.mu.Lock()
		h.datasets[last] = "filesystem"
		h.data[last] = append(buf, rest...) //nolint:makezero // buf was filled by io.ReadFull
		h.mu.Unlock()
		return 0
	}
	fmt.Fprintf(stderr, "unrecognized command '%s'\n", args[0])
	return 2
}

func (h *fakeHost) Zpool(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "list" {
		fmt.Fprintln(stdout, "tank")
		return 0
	}
	fmt.Fprintln(stderr, "unrecognized command")
	return 2
}

func (h *fakeHost) ZvolPath(ds string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.datasets[ds] != "volume" {
		return "", false
	}
	return filepath.Join(h.dir, "zvols", strings.ReplaceAll(ds, "/", "_")), true
}

func (h *fakeHost) HostPath(p string) (string, bool) {
	if p != "/tank" && !strings.HasPrefix(p, "/tank/") {
		return "", false
	}
	return filepath.Join(h.dir, "mnt", filepath.FromSlash(p)), true
}

// testKey is a client key pair.
func testKey(t *testing.T) ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const rootPW = "root-secret"

// testEnv is a running server with a fake host.
type testEnv struct {
	t    *testing.T
	srv  *Server
	host *fakeHost
	addr string
	opts Options
}

// defaultUsers: root (password), alice (no sudo), bob (NOPASSWD sudo).
func defaultUsers() map[string]User {
	return map[string]User{
		"root":  {Password: rootPW},
		"alice": {Password: "alice-pw"},
		"bob":   {Password: "bob-pw", Sudo: true},
		"carol": {Password: "carol-pw", Shell: "/bin/bash"},
	}
}

func startEnv(t *testing.T, mutate func(*Options)) *testEnv {
	t.Helper()
	host := newFakeHost(t)
	o := Options{Host: host, Users: defaultUsers(), NVMetPorts: []NVMetPort{{ID: 1, Trtype: "tcp", Adrfam: "ipv4", Traddr: "127.0.0.1", Trsvcid: "4420"}}}
	if mutate != nil {
		mutate(&o)
	}
	return startWith(t, host, o)
}

func startWith(t *testing.T, host *fakeHost, o Options) *testEnv {
	t.Helper()
	srv, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	addr, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return &testEnv{t: t, srv: srv, host: host, addr: addr.String(), opts: o}
}

func (e *testEnv) dial(user string, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	cfg := &ssh.ClientConfig{User: user, Auth: auth, HostKeyCallback: ssh.FixedHostKey(e.srv.HostKey()), Timeout: 10 * time.Second}
	return ssh.Dial("tcp", e.addr, cfg)
}

// client logs in with the user's password from defaultUsers.
func (e *testEnv) client(user string) *ssh.Client {
	e.t.Helper()
	c, err := e.dial(user, ssh.Password(e.opts.Users[user].Password))
	if err != nil {
		e.t.Fatalf("dial %s: %v", user, err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

type result struct {
	stdout, stderr string
	code           int
	err            error // a non-exit error (e.g. connection lost)
}

func runOn(t *testing.T, c *ssh.Client, cmd, stdin string, pty bool) result {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	defer s.Close()
	if pty {
		if err := s.RequestPty("xterm", 40, 80, ssh.TerminalModes{}); err != nil {
			t.Fatalf("RequestPty: %v", err)
		}
	}
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr = &out, &errb
	s.Stdin = strings.NewReader(stdin)
	err = s.Run(cmd)
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *ssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitStatus()
	default:
		r.err = err
		r.code = -1
	}
	return r
}

// run executes cmd as root (no pty, empty stdin).
func (e *testEnv) run(cmd string) result {
	e.t.Helper()
	return runOn(e.t, e.client("root"), cmd, "", false)
}

func (e *testEnv) runAs(user, cmd string) result {
	e.t.Helper()
	return runOn(e.t, e.client(user), cmd, "", false)
}

// argvs returns the argv of the recorded commands at depth, in order.
func argvs(recs []Record, depth int) [][]string {
	var out [][]string
	for _, r := range recs {
		if r.Depth == depth {
			out = append(out, r.Argv)
		}
	}
	return out
}

// readUntil reads from r until the accumulated text contains want.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var b strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q; got %q", want, b.String())
		}
		c, err := r.ReadByte()
		if err != nil {
			t.Fatalf("reading until %q: %v (got %q)", want, err, b.String())
		}
		b.WriteByte(c)
	}
	return b.String()
}
